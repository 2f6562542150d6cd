import type { ScanFinding } from '../pipeline/types.ts';
import { attr, childrenNamed, type XmlNode } from '../scanner/parse/xml-node.ts';
import {
  categoryOf,
  cveList,
  cvssOf,
  cweList,
  given,
  ImportBook,
  type ImportedScan,
  importedScan,
  referencesOf,
  type Severity,
  textOf as childText,
  TimeSpan,
  validPort,
} from './common.ts';
import { streamXmlItems } from './xml-items.ts';

/**
 * Nessus `.nessus` (v2): NessusClientData_v2 → Policy (ServerPreferences TARGET) and Report →
 * ReportHost (HostProperties tags, ReportItem per plugin result). Tenable's "Nessus v2 File
 * Format" document describes it; docs/cli/import.md has the mapping. HostProperties and each
 * ReportItem are read one at a time (a host of thousands of items is never held whole): the
 * format writes HostProperties first, and an item before it takes its host from ReportHost@name.
 */

/** ReportItem severity 0..4 (Nessus's risk: none, low, medium, high, critical). */
const SEVERITY: readonly Severity[] = ['info', 'low', 'medium', 'high', 'critical'];

const texts = (node: XmlNode, name: string) =>
  childrenNamed(node, name)
    .map((c) => c.text)
    .filter((t) => t !== '');
/** Nessus writes `n/a` for a field it has no value for. */
const textOf = (node: XmlNode, name: string) => {
  const t = childText(node, name);
  return t === 'n/a' ? undefined : t;
};

/** HOST_START/HOST_END: unix seconds in the *_TIMESTAMP tags, else Nessus's "Tue Jan 13 10:00:00 2026" (read as UTC). */
export function hostTime(tags: Map<string, string>, name: string): Date | undefined {
  const ts = Number(tags.get(`${name}_TIMESTAMP`));
  if (Number.isFinite(ts) && ts > 0) return new Date(ts * 1000);
  const m = /^\w{3} (\w{3}) +(\d{1,2}) (\d\d):(\d\d):(\d\d) (\d{4})$/.exec(tags.get(name)?.trim() ?? '');
  if (m === null) return undefined;
  const month = 'JanFebMarAprMayJunJulAugSepOctNovDec'.indexOf(m[1]!) / 3;
  if (!Number.isInteger(month)) return undefined;
  return new Date(Date.UTC(Number(m[6]), month, Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5])));
}

function itemFinding(item: XmlNode, ip: string, hostname: string | undefined): ScanFinding {
  const port = Number(attr(item, 'port') ?? '0');
  const svc = attr(item, 'svc_name');
  const sev = Number(attr(item, 'severity') ?? '0');
  const title = attr(item, 'pluginName') ?? textOf(item, 'plugin_name') ?? `Nessus plugin ${attr(item, 'pluginID')}`;
  const synopsis = textOf(item, 'synopsis');
  const description = [synopsis, textOf(item, 'description')].filter((t) => t !== undefined).join('\n\n');
  const urls = texts(item, 'see_also')
    .flatMap((t) => t.split(/\s+/))
    .filter((u) => /^https?:\/\//.test(u));
  const category = categoryOf(title, attr(item, 'pluginFamily'));
  return {
    rule_id: `nessus:${attr(item, 'pluginID') ?? '0'}`,
    title,
    severity: SEVERITY[Number.isInteger(sev) && sev >= 0 && sev <= 4 ? sev : 0]!,
    host: ip,
    ...given('hostname', hostname),
    ...given('port', validPort(port)),
    ...given('protocol', attr(item, 'protocol')),
    ...given('service', svc === undefined || svc === 'general' ? undefined : svc.replace(/\?$/, '')),
    ...given('evidence', textOf(item, 'plugin_output')),
    ...given('description', description),
    ...given('remediation', textOf(item, 'solution')),
    ...referencesOf(cveList(texts(item, 'cve')), cweList(texts(item, 'cwe')), urls),
    ...given('cvss', cvssOf(textOf(item, 'cvss3_base_score')) ?? cvssOf(textOf(item, 'cvss_base_score'))),
    ...given('category', category),
  };
}

/** The ReportHost being read: its name, then what its HostProperties say. */
interface OpenHost {
  name: string;
  ip?: string | undefined;
  hostname?: string | undefined;
  added: boolean;
}

export async function parseNessus(file: string, maxBytes: number): Promise<ImportedScan> {
  const book = new ImportBook();
  let target: string | undefined;
  let portRange: string | undefined;
  const span = new TimeSpan();
  let records = 0;
  let host: OpenHost | undefined;
  const isHost = (p: readonly string[]) => p.length === 3 && p[1] === 'Report' && p[2] === 'ReportHost';
  /** The host record, once: from HostProperties, else (none before an item, or none at all) the name. */
  const addHost = (h: OpenHost, os?: string) => {
    if (h.added) return;
    h.added = true;
    h.ip ??= h.name;
    if (h.ip !== '') book.hosts.add(h.ip, { hostname: h.hostname, os });
  };
  await streamXmlItems(file, maxBytes, {
    roots: ['NessusClientData_v2'],
    format: 'Nessus v2',
    isItem: (p) =>
      (p.length === 4 && isHost(p.slice(0, 3)) && (p[3] === 'HostProperties' || p[3] === 'ReportItem')) ||
      (p.length === 5 && p[3] === 'ServerPreferences' && p[4] === 'preference'),
    onOpen: (p, attrs) => {
      if (!isHost(p)) return;
      records += 1;
      host = { name: attrs['name'] ?? '', added: false };
    },
    onClose: (p) => {
      if (isHost(p) && host !== undefined) addHost(host);
      if (isHost(p)) host = undefined;
    },
    onItem: (_path, node) => {
      if (node.name === 'preference') {
        if (textOf(node, 'name') === 'TARGET') target = textOf(node, 'value');
        if (textOf(node, 'name') === 'port_range') portRange = textOf(node, 'value');
        return;
      }
      if (host === undefined) return;
      if (node.name === 'HostProperties') {
        const tags = new Map<string, string>();
        for (const t of childrenNamed(node, 'tag'))
          if (t.attrs['name'] !== undefined) tags.set(t.attrs['name'], t.text);
        span.add(hostTime(tags, 'HOST_START'), hostTime(tags, 'HOST_END'));
        if (host.added) return;
        host.ip = tags.get('host-ip') || host.name;
        host.hostname = tags.get('host-fqdn') || tags.get('hostname') || tags.get('netbios-name') || undefined;
        addHost(host, tags.get('operating-system'));
        return;
      }
      addHost(host);
      if (host.ip !== '') book.add(itemFinding(node, host.ip!, host.hostname));
    },
  });
  const normalisedTarget = target
    ?.split(/[\s,]+/)
    .filter((t) => t !== '')
    .join(',');
  return importedScan('nessus', {
    book,
    records,
    span,
    target: normalisedTarget,
    statedPorts: statedRange(portRange),
  });
}

/**
 * The policy's `port_range` as a port list: `all` is every TCP port, a list is taken as it is
 * (`T:`/`U:` prefixes allowed); `default` (Nessus's own list of about 4,800 ports, which the
 * file does not spell out) or anything else states nothing, and the ports of the items count alone.
 */
export function statedRange(value: string | undefined): string[] {
  const v = value?.trim().toLowerCase() ?? '';
  if (v === 'all') return ['1-65535'];
  return /^(?:[tu]:)?\d/.test(v) ? [v.toUpperCase()] : [];
}
