/**
 * Files of other scanners, written the way each tool documents them, for the import tests
 * (docs/cli/import.md lists the sources): Nessus v2 (`.nessus`), a Greenbone/OpenVAS XML report
 * (GSA's XML report format: report → report → results → result) and Nuclei JSON lines. One list
 * of items describes the findings; each writer puts them in its tool's shape.
 */

export type ForeignSeverity = 'critical' | 'high' | 'medium' | 'low' | 'info';

export interface ForeignItem {
  host: string;
  hostname?: string | undefined;
  /** 0 for a host-level result. */
  port: number;
  protocol?: 'tcp' | 'udp';
  service?: string;
  /** Nessus plugin id, Greenbone NVT OID or Nuclei template id. */
  id: string;
  name: string;
  severity: ForeignSeverity;
  cvss?: number;
  cve?: string[];
  cwe?: string[];
  urls?: string[];
  synopsis?: string;
  description: string;
  solution: string;
  output: string;
}

export interface ForeignRun {
  /** What the file names as the scan's target (Nessus TARGET, Greenbone target name). */
  target?: string;
  start: Date;
  end: Date;
  items: readonly ForeignItem[];
  /** Host operating systems by address. */
  os?: Readonly<Record<string, string>>;
}

export const xmlEscape = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const hostsOf = (items: readonly ForeignItem[]) => [...new Set(items.map((i) => i.host))];
const NESSUS_SEVERITY: Readonly<Record<ForeignSeverity, number>> = { info: 0, low: 1, medium: 2, high: 3, critical: 4 };
/** Nessus's HOST_START text: `Tue Jan 13 10:00:00 2026` (the scanner's clock; UTC here). */
const nessusTime = (d: Date) => {
  const s = d.toUTCString(); // "Tue, 13 Jan 2026 10:00:00 GMT"
  const [, wd, day, mon, year, time] = /^(\w+), (\d+) (\w+) (\d+) ([\d:]+)/.exec(s)!;
  return `${wd} ${mon} ${Number(day)} ${time} ${year}`;
};

/** A `.nessus` v2 file: Policy (with the TARGET server preference) and Report of ReportHosts. */
export function nessusV2(run: ForeignRun): string {
  const hosts = hostsOf(run.items).map((ip) => {
    const items = run.items.filter((i) => i.host === ip);
    const fqdn = items.find((i) => i.hostname !== undefined)?.hostname;
    const tag = (name: string, value: string) => `<tag name="${name}">${xmlEscape(value)}</tag>`;
    const props = [
      tag('HOST_END', nessusTime(run.end)),
      tag('HOST_END_TIMESTAMP', String(Math.floor(run.end.getTime() / 1000))),
      ...(run.os?.[ip] === undefined ? [] : [tag('operating-system', run.os[ip])]),
      tag('host-ip', ip),
      ...(fqdn === undefined ? [] : [tag('host-fqdn', fqdn)]),
      tag('HOST_START', nessusTime(run.start)),
      tag('HOST_START_TIMESTAMP', String(Math.floor(run.start.getTime() / 1000))),
    ];
    const reportItems = items.map((i) => {
      const el = (name: string, value: string | undefined) =>
        value === undefined ? '' : `<${name}>${xmlEscape(value)}</${name}>\n`;
      return (
        `<ReportItem port="${i.port}" svc_name="${i.service ?? 'general'}" protocol="${i.protocol ?? 'tcp'}" severity="${NESSUS_SEVERITY[i.severity]}" pluginID="${i.id}" pluginName="${xmlEscape(i.name)}" pluginFamily="General">\n` +
        el('cvss3_base_score', i.cvss?.toFixed(1)) +
        el('description', i.description) +
        el('plugin_modification_date', '2025/01/01') +
        el('plugin_name', i.name) +
        el('plugin_type', 'remote') +
        el('risk_factor', i.severity === 'info' ? 'None' : i.severity[0]!.toUpperCase() + i.severity.slice(1)) +
        el('see_also', i.urls?.join('\n')) +
        el('solution', i.solution) +
        el('synopsis', i.synopsis) +
        (i.cve ?? []).map((c) => el('cve', c)).join('') +
        (i.cwe ?? []).map((c) => el('cwe', c.replace(/^CWE-/, ''))).join('') +
        el('plugin_output', i.output) +
        '</ReportItem>'
      );
    });
    return `<ReportHost name="${ip}"><HostProperties>\n${props.join('\n')}\n</HostProperties>\n${reportItems.join('\n')}\n</ReportHost>`;
  });
  const target = run.target ?? hostsOf(run.items).join(',');
  return `<?xml version="1.0" ?>
<NessusClientData_v2>
<Policy><policyName>Basic Network Scan</policyName>
<Preferences><ServerPreferences>
<preference><name>plugin_set</name><value>202601010000</value></preference>
<preference><name>TARGET</name><value>${xmlEscape(target)}</value></preference>
</ServerPreferences>
<PluginsPreferences></PluginsPreferences></Preferences>
<FamilySelection><FamilyItem><FamilyName>General</FamilyName><Status>enabled</Status></FamilyItem></FamilySelection>
</Policy>
<Report name="Imported test scan" xmlns:cm="http://www.nessus.org/cm">
${hosts.join('\n')}
</Report>
</NessusClientData_v2>
`;
}

/** Greenbone's threat word for a severity (older feeds have no Critical: High covers 7 to 10). */
const THREAT: Readonly<Record<ForeignSeverity, string>> = {
  critical: 'Critical',
  high: 'High',
  medium: 'Medium',
  low: 'Low',
  info: 'Log',
};
const DEFAULT_SCORE: Readonly<Record<ForeignSeverity, number>> = {
  critical: 9.8,
  high: 7.5,
  medium: 5,
  low: 2.6,
  info: 0,
};

/** A Greenbone/OpenVAS report as GSA exports it with the XML report format. */
export function openvasReport(run: ForeignRun & { version?: string }): string {
  const results = run.items.map((i, n) => {
    const score = i.cvss ?? DEFAULT_SCORE[i.severity];
    const refs = [
      ...(i.cve ?? []).map((c) => `<ref type="cve" id="${c}"/>`),
      ...(i.urls ?? []).map((u) => `<ref type="url" id="${xmlEscape(u)}"/>`),
      '<ref type="cert-bund" id="WID-SEC-2025-0001"/>',
    ];
    const tags = `cvss_base_vector=AV:N/AC:L/Au:N/C:P/I:N/A:N|summary=${i.synopsis ?? i.description}|insight=${i.description}|affected=All versions|solution=${i.solution}|vuldetect=Checks the banner.|solution_type=VendorFix`;
    return `<result id="00000000-0000-4000-8000-${String(n).padStart(12, '0')}">
<name>${xmlEscape(i.name)}</name>
<owner><name>admin</name></owner>
<modification_time>${run.end.toISOString()}</modification_time>
<comment></comment>
<creation_time>${run.end.toISOString()}</creation_time>
<host>${i.host}<asset asset_id="11111111-0000-4000-8000-000000000000"/>${i.hostname === undefined ? '<hostname></hostname>' : `<hostname>${i.hostname}</hostname>`}</host>
<port>${i.port === 0 ? 'general' : i.port}/${i.protocol ?? 'tcp'}</port>
<nvt oid="${i.id}">
<type>nvt</type>
<name>${xmlEscape(i.name)}</name>
<family>General</family>
<cvss_base>${score.toFixed(1)}</cvss_base>
<severities score="${score.toFixed(1)}"><severity type="cvss_base_v3"><origin></origin><date>2025-01-01T00:00:00Z</date><score>${score.toFixed(1)}</score><value>CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N</value></severity></severities>
<tags>${xmlEscape(tags)}</tags>
<solution type="VendorFix">${xmlEscape(i.solution)}</solution>
<refs>${refs.join('')}</refs>
</nvt>
<scan_nvt_version>2025-01-01T00:00:00Z</scan_nvt_version>
<threat>${THREAT[i.severity]}</threat>
<severity>${score.toFixed(1)}</severity>
<qod><value>80</value><type>remote_banner</type></qod>
<description>${xmlEscape(i.output)}</description>
<original_threat>${THREAT[i.severity]}</original_threat>
<original_severity>${score.toFixed(1)}</original_severity>
<compliance>undefined</compliance>
</result>`;
  });
  const hosts = hostsOf(run.items).map(
    (
      ip,
    ) => `<host><ip>${ip}</ip><asset asset_id="11111111-0000-4000-8000-000000000000"/><start>${run.start.toISOString()}</start><end>${run.end.toISOString()}</end>
<detail><name>best_os_txt</name><value>${xmlEscape(run.os?.[ip] ?? 'Linux Kernel')}</value><source><type>nvt</type><name>1.3.6.1.4.1.25623.1.0.105937</name></source></detail>
</host>`,
  );
  return `<report id="22222222-0000-4000-8000-000000000000" format_id="a994b278-1f62-11e1-96ac-406186ea4fc5" extension="xml" content_type="text/xml">
<owner><name>admin</name></owner><name>${run.start.toISOString()}</name><comment></comment>
<creation_time>${run.start.toISOString()}</creation_time><modification_time>${run.end.toISOString()}</modification_time>
<writable>0</writable><in_use>0</in_use>
<task id="33333333-0000-4000-8000-000000000000"><name>Weekly scan</name></task>
<report_format id="a994b278-1f62-11e1-96ac-406186ea4fc5"><name>XML</name></report_format>
<report id="22222222-0000-4000-8000-000000000000">
<gmp><version>${run.version ?? '22.4'}</version></gmp>
<sort><field>severity<order>descending</order></field></sort>
<filters id=""><term>apply_overrides=0 min_qod=70 first=1 rows=1000 sort-reverse=severity</term></filters>
<scan_run_status>Done</scan_run_status>
<hosts><count>${hostsOf(run.items).length}</count></hosts>
<task id="33333333-0000-4000-8000-000000000000"><name>Weekly scan</name><comment></comment>
<target id="44444444-0000-4000-8000-000000000000"><trash>0</trash><name>${xmlEscape(run.target ?? 'Lab hosts')}</name><comment></comment></target>
<progress>-1</progress></task>
<timestamp>${run.start.toISOString()}</timestamp>
<scan_start>${run.start.toISOString()}</scan_start>
<timezone>Coordinated Universal Time</timezone>
<ports start="1" max="-1"><count>${run.items.length}</count></ports>
<results start="1" max="${run.items.length}">
${results.join('\n')}
</results>
<result_count>${run.items.length}<full>${run.items.length}</full><filtered>${run.items.length}</filtered></result_count>
${hosts.join('\n')}
<scan_end>${run.end.toISOString()}</scan_end>
<errors><count>0</count></errors>
</report>
</report>
`;
}

/** Nuclei's `-jsonl` output: one result a line; `at` is each line's timestamp, a second apart. */
export function nucleiJsonl(run: ForeignRun): string {
  return run.items
    .map((i, n) => {
      const scheme = i.service === 'https' ? 'https' : i.service === 'http' ? 'http' : undefined;
      const host =
        scheme === undefined ? `${i.hostname ?? i.host}:${i.port}` : `${scheme}://${i.hostname ?? i.host}:${i.port}`;
      const line = {
        template: `http/misconfiguration/${i.id}.yaml`,
        'template-url': `https://cloud.projectdiscovery.io/public/${i.id}`,
        'template-id': i.id,
        'template-path': `/root/nuclei-templates/http/misconfiguration/${i.id}.yaml`,
        info: {
          name: i.name,
          author: ['test'],
          tags: ['misc', ...(i.cve === undefined ? [] : ['cve'])],
          description: i.description,
          reference: i.urls ?? null,
          severity: i.severity,
          metadata: { 'max-request': 1 },
          classification: {
            'cve-id': i.cve?.map((c) => c.toLowerCase()) ?? null,
            'cwe-id': i.cwe?.map((c) => c.toLowerCase()) ?? null,
            ...(i.cvss === undefined ? {} : { 'cvss-score': i.cvss }),
          },
          remediation: i.solution,
        },
        type: scheme === undefined ? 'tcp' : 'http',
        host,
        port: String(i.port),
        scheme,
        url: scheme === undefined ? undefined : `${host}/`,
        'matched-at': scheme === undefined ? host : `${host}/`,
        'extracted-results': [i.output],
        ip: i.host,
        timestamp: new Date(run.start.getTime() + n * 1000).toISOString(),
        'matcher-status': true,
      };
      return JSON.stringify(line);
    })
    .join('\n')
    .concat('\n');
}
