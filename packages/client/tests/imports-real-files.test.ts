import fs from 'node:fs';
import path from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseForeignFile } from '../src/imports/detect.ts';
import { DEFAULT_MAX_BYTES, ImportError } from '../src/imports/guard.ts';
import { tempHome } from '@svc/test-support/cli';

/**
 * Each importer over real files other tools wrote (fixtures/imports/SOURCES.md names them): what
 * the source holds is what the import keeps. Expected counts are read from the files themselves
 * where a plain reading can (XML text, JSON, CSV), and pinned where the mapping decides.
 */

const FIXTURES = path.join(import.meta.dirname, 'fixtures/imports');
const fixture = (name: string) => path.join(FIXTURES, name);
const read = (name: string) => fs.readFileSync(fixture(name), 'utf8');
const parse = (file: string, format: 'auto' | 'nmap' | 'nessus' | 'openvas' | 'nuclei' = 'auto') =>
  parseForeignFile(file, { format, maxBytes: DEFAULT_MAX_BYTES, now: new Date(0) });
const refusal = async (p: Promise<unknown>) => {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ImportError);
  return err as ImportError;
};
type Json = Record<string, unknown>;
const jsonLines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Json);

let dir: string;
beforeAll(async () => {
  dir = await tempHome();
});
afterAll(async () => {
  await fs.promises.rm(dir, { recursive: true, force: true });
});
const write = (name: string, text: string) => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, text);
  return p;
};

describe("nmap: scripts that name CVEs (DefectDojo's vulners scan of OpenSSH 7.4)", () => {
  const FILE = 'defectdojo-nmap-vulners-openssh.xml';

  it('keeps every CVE id the vulners output names as references of the service finding', async () => {
    const xml = read(FILE);
    const output = /<script id="vulners" output="([^"]*)"/.exec(xml)![1]!;
    const named = [...new Set(output.match(/CVE-\d{4}-\d{4,}/g))];
    expect(named).toHaveLength(9);
    const scan = await parse(fixture(FILE));
    const vulners = scan.findings.filter((f) => f.rule_id === 'nmap-script:vulners');
    expect(vulners).toHaveLength(1);
    expect(vulners[0]).toMatchObject({
      title: "OpenSSH 7.4: 9 CVEs named by nmap's vulners script (potential)",
      host: '10.250.195.71',
      port: 22,
      protocol: 'tcp',
      service: 'ssh',
      severity: 'medium',
      cvss: 5.8,
      category: 'vulnerable_software',
      // vulners looks the reported version up: a range match, not a check of the service.
      match: { kind: 'version_range', confidence: 'potential', source: "nmap's vulners script" },
    });
    expect(vulners[0]!.references?.cve).toEqual([
      'CVE-2019-6111',
      'CVE-2019-25017',
      'CVE-2018-15919',
      'CVE-2018-15473',
      'CVE-2017-15906',
      'CVE-2020-14145',
      'CVE-2019-6110',
      'CVE-2019-6109',
      'CVE-2018-20685',
    ]);
    expect(new Set(vulners[0]!.references?.cve)).toEqual(new Set(named));
    // The rules of svc scan still run beside it: the hand table's OpenSSH 7.4 entries.
    expect(scan.findings.filter((f) => f.port === 22).map((f) => f.rule_id)).toEqual([
      'outdated-software:openssh-terrapin',
      'outdated-software:openssh-supplemental-groups',
      'outdated-software:openssh-user-enumeration',
      'nmap-script:vulners',
    ]);
  });

  const run = (ports: string, hostscripts = '') =>
    `<?xml version="1.0"?>\n<nmaprun scanner="nmap" args="nmap -sV --script vuln 192.0.2.20" start="1700000000" version="7.93">\n<scaninfo type="syn" protocol="tcp" numservices="2" services="80,445"/>\n<host><status state="up" reason="syn-ack"/>\n<address addr="192.0.2.20" addrtype="ipv4"/>\n<ports>${ports}</ports>${hostscripts}</host>\n<runstats><finished time="1700000100"/><hosts up="1" down="0" total="1"/></runstats>\n</nmaprun>\n`;
  // The vulns library's XML as nmap documents it (@xmloutput of smb-vuln-ms17-010, ssl-heartbleed).
  const ms17 =
    '<hostscript><script id="smb-vuln-ms17-010" output="&#xa;  VULNERABLE:&#xa;  Remote Code Execution vulnerability in Microsoft SMBv1 servers (ms17-010)&#xa;    State: VULNERABLE&#xa;    IDs:  CVE:CVE-2017-0143&#xa;    Risk factor: HIGH&#xa;"><table key="CVE-2017-0143"><elem key="title">Remote Code Execution vulnerability in Microsoft SMBv1 servers (ms17-010)</elem><elem key="state">VULNERABLE</elem><table key="ids"><elem>CVE:CVE-2017-0143</elem></table></table></script></hostscript>';
  const http = (script: string) =>
    `<port protocol="tcp" portid="80"><state state="open" reason="syn-ack"/><service name="http" product="Apache httpd" version="2.4.49" method="probed" conf="10"/>${script}</port>`;

  it("a vuln script's VULNERABLE entry is a finding with its CVE and risk factor; NOT VULNERABLE is none", async () => {
    const notVulnerable =
      '<script id="http-vuln-cve2011-3192" output="Not vulnerable"><table key="CVE-2011-3192"><elem key="title">Apache byterange filter DoS</elem><elem key="state">NOT VULNERABLE</elem><table key="ids"><elem>CVE:CVE-2011-3192</elem></table></table></script>';
    const scan = await parse(write('vuln.xml', run(http(notVulnerable), ms17)));
    const fromScripts = scan.findings.filter((f) => f.rule_id?.startsWith('nmap-script:'));
    expect(fromScripts.map((f) => [f.rule_id, f.port, f.severity, f.references?.cve, f.title])).toEqual([
      [
        'nmap-script:smb-vuln-ms17-010',
        undefined,
        'high',
        ['CVE-2017-0143'],
        'Remote Code Execution vulnerability in Microsoft SMBv1 servers (ms17-010)',
      ],
    ]);
  });

  it('the CVE ids any other script names (vulscan) are kept, unscored', async () => {
    const vulscan =
      '<script id="vulscan" output="cve.csv:&#xa;[CVE-2021-41773] Path traversal in Apache HTTP Server 2.4.49&#xa;[CVE-2021-42013] Path traversal in Apache HTTP Server 2.4.49 and 2.4.50&#xa;"/>';
    const scan = await parse(write('vulscan.xml', run(http(vulscan))));
    const f = scan.findings.find((x) => x.rule_id === 'nmap-script:vulscan');
    expect(f).toMatchObject({
      port: 80,
      severity: 'medium',
      references: { cve: ['CVE-2021-41773', 'CVE-2021-42013'] },
    });
    expect(f?.cvss).toBeUndefined();
  });
});

describe('what comes before the XML declaration', () => {
  const FILE = 'securecodebox-nmap-localhost.xml';
  const expected = {
    format: 'nmap',
    version: '7.80',
    target: 'localhost',
    records: 1,
    hosts: [{ ip: '127.0.0.1', hostname: 'localhost', open_ports: [53, 8021, 8080, 9200] }],
  };

  it("secureCodeBox's nmap file, a licence comment above <?xml ...?>, is read", async () => {
    expect(read(FILE).startsWith('<!--\nSPDX-FileCopyrightText')).toBe(true);
    await expect(parse(fixture(FILE))).resolves.toMatchObject(expected);
  });

  it('a BOM and white space before it too, in nmap, Nessus and Greenbone XML', async () => {
    const nmap = write('bom.xml', `\uFEFF\n  \n${read(FILE)}`);
    await expect(parse(nmap)).resolves.toMatchObject(expected);
    const nessus = write(
      'bom.nessus',
      `\uFEFF<!-- exported -->\r\n${read('ruby-nessus-v1-scanme.nessus').replace(/^/, '<?xml version="1.0"?>\n')}`,
    );
    await expect(parse(nessus)).resolves.toMatchObject({ format: 'nessus', records: 1 });
  });

  it('anything else before the declaration is still malformed, and the refusal names the file', async () => {
    const text = write('text-first.xml', `scan of the lab\n${read(FILE)}`);
    const err = await refusal(parse(text, 'nmap'));
    expect(err.message.startsWith(`${text}: Malformed nmap XML: `)).toBe(true);
  });
});

describe('refusals name the file and what was expected', () => {
  it('a file of no format: what it starts with, and the formats read', async () => {
    const csv = write('assets.csv', 'name,owner\nweb,ops\n');
    const err = await refusal(parse(csv));
    expect(err.kind).toBe('usage');
    expect(err.message).toBe(
      `${csv} is not a format svc imports: it starts with "name,owner"; expected nmap XML, Nessus .nessus (v1 or v2), a Greenbone/OpenVAS report (XML, or the CSV results export), or Nuclei output (JSON lines, the -json-export array, or an empty file from a run without results) (--format nmap|nessus|openvas|nuclei)`,
    );
    const xml = write('other.xml', '<?xml version="1.0"?>\n<!-- x -->\n<issues burpVersion="2"/>\n');
    expect((await refusal(parse(xml))).message).toMatch(
      new RegExp(`^${xml} is not a format svc imports: it starts with XML with the root element <issues>; expected`),
    );
  });

  it('a CSV that is not the Greenbone export, given as openvas', async () => {
    const csv = write('gvm-other.csv', 'IP,Hostname,Port,Port Protocol,CVSS,Severity,Summary\n192.0.2.1,,,,1,Low,x\n');
    expect((await refusal(parse(csv))).message).toBe(
      `${csv}: Not a Greenbone CSV results export: the header lacks NVT Name, NVT OID (expected GSA's "CSV Results" columns IP, Hostname, Port, Port Protocol, CVSS, Severity, ..., NVT Name, ..., NVT OID)`,
    );
  });
});

describe('Nuclei v3: every result is a finding', () => {
  it("DefectDojo's DVWA run: 27 results of 17 templates, none with host, on the address the others give", async () => {
    const lines = jsonLines(read('defectdojo-nuclei-v3-dvwa.jsonl'));
    expect(lines).toHaveLength(27);
    expect(lines.filter((l) => 'host' in l)).toEqual([]);
    const templates = [...new Set(lines.map((l) => l['template-id'] as string))];
    expect(templates).toHaveLength(17);
    const scan = await parse(fixture('defectdojo-nuclei-v3-dvwa.jsonl'));
    expect(scan).toMatchObject({ format: 'nuclei', variant: 'JSON lines', records: 27 });
    // One finding per template: the 11 results of http-missing-security-headers on one service merge.
    expect(scan.findings.map((f) => f.rule_id).sort()).toEqual(templates.map((t) => `nuclei:${t}`).sort());
    expect(new Set(scan.findings.map((f) => f.host))).toEqual(new Set(['172.18.0.3']));
    const byRule = Object.fromEntries(scan.findings.map((f) => [f.rule_id, f]));
    // Only `url` (written /http://dvwa_dvwa_1/) and `port`: the name's address from the other results.
    expect(byRule['nuclei:cookies-without-secure']).toMatchObject({ port: 80, protocol: 'tcp', severity: 'info' });
    expect(byRule['nuclei:cookies-without-secure']!.evidence).toBe('http://dvwa_dvwa_1/\nPHPSESSID\nsecurity');
    // No place at all (a DNS template): the scan's only host, without a port.
    expect(byRule['nuclei:nameserver-fingerprint']).toMatchObject({ host: '172.18.0.3', severity: 'info' });
    expect(byRule['nuclei:nameserver-fingerprint']!.port).toBeUndefined();
    expect(byRule['nuclei:dvwa-default-login']).toMatchObject({
      severity: 'critical',
      category: 'default_credentials',
      references: { cwe: ['CWE-798'] },
    });
    // dvwa_dvwa_1 (a container name with underscores) is no RFC 1123 host name: dropped, counted.
    expect(scan.checks).toEqual({ invalid_hosts: 0, invalid_hostnames: 26, cut_fields: 0 });
  });

  it("the -json-export array (DefectDojo's multiple_v3.json): 6 results, 5 findings on the address of www.asdf.de", async () => {
    const results = JSON.parse(read('defectdojo-nuclei-v3-array.json')) as Json[];
    expect(results).toHaveLength(6);
    const scan = await parse(fixture('defectdojo-nuclei-v3-array.json'));
    expect(scan).toMatchObject({ format: 'nuclei', variant: 'JSON array', records: 6 });
    expect(scan.findings.map((f) => [f.rule_id, f.host, f.hostname, f.port ?? null])).toEqual([
      ['nuclei:ssl-issuer', '8.8.8.8', 'www.asdf.de', 443],
      ['nuclei:ssl-dns-names', '8.8.8.8', 'www.asdf.de', 443],
      ['nuclei:tls-version', '8.8.8.8', 'www.asdf.de', 443],
      ['nuclei:dns-saas-service-detection', '8.8.8.8', 'www.asdf.de', null],
      ['nuclei:caa-fingerprint', '8.8.8.8', 'www.asdf.de', null],
    ]);
    // tls-version matched twice on one service: one finding listing both.
    expect(scan.findings[2]!.evidence).toBe('www.asdf.de:443\ntls12\nwww.asdf.de:443\ntls13');
    expect(scan.hosts).toEqual([{ ip: '8.8.8.8', hostname: 'www.asdf.de', open_ports: [443] }]);
  });

  it("a CVE named only in the template id (secureCodeBox's log4shell result) is taken", async () => {
    const scan = await parse(fixture('securecodebox-nuclei-log4shell.jsonl'));
    expect(scan.findings).toHaveLength(1);
    expect(scan.findings[0]).toMatchObject({
      rule_id: 'nuclei:CVE-2021-44228',
      title: 'Remote code injection in Log4j',
      severity: 'critical',
      host: '10.1.6.107',
      port: 8080,
      references: { cve: ['CVE-2021-44228'] },
    });
    const line = jsonLines(read('securecodebox-nuclei-log4shell.jsonl'))[0]!;
    const renamed = {
      ...line,
      'template-id': 'cve-2021-44228-log4j-rce',
      info: { ...(line['info'] as Json), classification: { 'cve-id': ['cve-2021-45046'] } },
    };
    const both = await parse(write('renamed.jsonl', `${JSON.stringify(renamed)}\n`));
    expect(both.findings[0]!.references?.cve).toEqual(['CVE-2021-45046', 'CVE-2021-44228']);
  });

  it("an empty file (secureCodeBox's clean run) needs the targets it scanned, and names the file without them", async () => {
    const empty = fixture('securecodebox-nuclei-empty.jsonl');
    expect(fs.statSync(empty).size).toBe(0);
    const err = await refusal(parse(empty));
    expect(err.kind).toBe('usage');
    expect(err.message).toBe(
      `${empty} holds no Nuclei result: a run without results writes an empty file; name what it scanned with --targets (URLs, host:port or hosts) to import it as a clean run`,
    );
    const clean = await parseForeignFile(empty, {
      format: 'auto',
      maxBytes: DEFAULT_MAX_BYTES,
      now: new Date(0),
      targets: [{ text: 'http://10.1.6.107:8080', host: '10.1.6.107', port: 8080 }],
    });
    expect(clean).toMatchObject({ format: 'nuclei', variant: 'empty', records: 0, findings: [], hosts: [] });
  });
});

describe('Nessus v1 (ruby-nessus: Nessus 4.0.2 scanning scanme.insecure.org)', () => {
  const FILE = 'ruby-nessus-v1-scanme.nessus';

  it('one finding per ReportItem that is not an open-port record, with its data sections', async () => {
    const xml = read(FILE);
    const items = [...xml.matchAll(/<ReportItem>.*?<pluginID>(\d+)<\/pluginID>/g)].map((m) => m[1]);
    expect(items).toHaveLength(27);
    const findings = items.filter((id) => id !== '0');
    const scan = await parse(fixture(FILE));
    expect(scan).toMatchObject({
      format: 'nessus',
      variant: 'v1',
      records: 1,
      target: 'scanme.insecure.org',
      startedAt: new Date('2009-11-08T02:21:23Z'),
      finishedAt: new Date('2009-11-08T02:31:29Z'),
    });
    expect(scan.findings.map((f) => f.rule_id?.replace('nessus:', ''))).toEqual(findings);
    expect(scan.hosts).toEqual([
      {
        ip: 'scanme.insecure.org',
        os_guess: 'Linux Kernel 2.6 on Red Hat Enterprise Linux 5',
        open_ports: [21, 53, 80, 554, 7070],
      },
    ]);
    const bySeverity = (s: string) => scan.findings.filter((f) => f.severity === s).length;
    // Risk factor Medium in 3 items (severity 2), None or absent in the rest.
    expect([bySeverity('medium'), bySeverity('info')]).toEqual([3, 19]);
    expect(scan.findings.find((f) => f.rule_id === 'nessus:10539')).toEqual({
      rule_id: 'nessus:10539',
      title: 'DNS Server Recursive Query Cache Poisoning Weakness',
      severity: 'medium',
      host: 'scanme.insecure.org',
      port: 53,
      protocol: 'udp',
      service: 'domain',
      description: expect.stringMatching(
        /^The remote name server allows recursive queries to be performed\nby the host running nessusd\.\n\nIt is possible to query/,
      ),
      remediation: expect.stringMatching(/^Restrict recursive queries to the hosts that should\nuse this nameserver/),
      references: { cve: ['CVE-1999-0024'], urls: ['http://www.cert.org/advisories/CA-1997-22.html'] },
      cvss: 5,
    });
    expect(scan.findings.find((f) => f.rule_id === 'nessus:22964')).toMatchObject({
      port: 80,
      evidence: 'A web server is running on this port.',
    });
    // Open ports listed by the records count as scanned, findings on them or not.
    expect(scan.coverage.ports).toEqual({ tcp: '21,53,80,554,7070', udp: '53' });
  });
});

describe('Greenbone CSV results export (DefectDojo test data)', () => {
  const rows = (name: string) => parseCsv(read(name), { columns: true, bom: true }) as Record<string, string>[];

  it('many_vuln.csv: 4 results on one host, severity from the CVSS score, the CVEs column', async () => {
    const source = rows('defectdojo-openvas-many-vuln.csv');
    const scan = await parse(fixture('defectdojo-openvas-many-vuln.csv'));
    expect(scan).toMatchObject({ format: 'openvas', variant: 'CSV', records: source.length, target: 'LOGSRV' });
    expect(scan.findings.map((f) => [f.rule_id, f.port ?? null, f.severity, f.cvss])).toEqual(
      source.map((r) => [
        `openvas:${r['NVT OID']}`,
        r['Port'] === '' ? null : Number(r['Port']),
        expect.any(String),
        Number(r['CVSS']),
      ]),
    );
    expect(scan.findings.map((f) => f.severity)).toEqual(['low', 'medium', 'medium', 'critical']);
    expect(scan.findings[2]!.references?.cve).toEqual(['CVE-2011-3389', 'CVE-2015-0204']);
    expect(scan.hosts).toEqual([{ ip: '192.168.118.212', hostname: 'LOGSRV', open_ports: [9200] }]);
  });

  it('report_using_openVAS.csv (scanme.nmap.org, with QoD): every row a finding, Log rows info', async () => {
    const source = rows('defectdojo-openvas-scanme.csv');
    const scan = await parse(fixture('defectdojo-openvas-scanme.csv'));
    expect(scan.records).toBe(13);
    expect(scan.findings).toHaveLength(source.length);
    expect(scan.findings.filter((f) => f.severity === 'info')).toHaveLength(
      source.filter((r) => r['Severity'] === 'Log').length,
    );
    expect(scan.findings.map((f) => (f as { qod?: number }).qod)).toEqual(source.map((r) => Number(r['QoD'])));
    expect(scan.target).toBe('ScanmeNmap');
  });

  it('report_detail_v2.csv (newer columns, EPSS): the 93 CVEs of one Windows update result', async () => {
    const source = rows('defectdojo-openvas-detail-epss.csv');
    const cves = source[0]!['CVEs']!.split(',');
    expect(cves).toHaveLength(93);
    const scan = await parse(fixture('defectdojo-openvas-detail-epss.csv'));
    expect(scan.findings).toHaveLength(1);
    expect(scan.findings[0]).toMatchObject({
      host: '10.99.99.99',
      hostname: 'server99',
      port: 42,
      protocol: 'tcp',
      severity: 'critical',
      cvss: 9.8,
      qod: 80,
    });
    expect(scan.findings[0]!.references?.cve).toEqual(cves);
  });
});
