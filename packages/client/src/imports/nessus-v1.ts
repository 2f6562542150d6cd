import type { ScanFinding } from '../pipeline/types.ts';
import type { XmlNode } from '../scanner/parse/xml-node.ts';
import {
  categoryOf,
  cveList,
  cvssOf,
  given,
  ImportBook,
  type ImportedScan,
  importedScan,
  referencesOf,
  type Severity,
  textOf,
  TimeSpan,
  validPort,
} from './common.ts';
import { hostTime, statedRange } from './nessus.ts';
import { streamXmlItems } from './xml-items.ts';

/**
 * Nessus `.nessus` v1 (Nessus 3 and 4): NessusClientData → Targets and Report → ReportHost
 * (HostName, startTime, stopTime, dns_name, netbios_name, os_name, then one ReportItem per
 * result: `port` as `http (80/tcp)` or `general/tcp`, `severity` 0-3, `pluginID`, `pluginName`,
 * `data`). A result's text is one `data` field, its newlines written as the two characters `\n`,
 * with sections `Synopsis :`, `Description :`, `Solution :`, `Risk factor :`, `Plugin output :`,
 * `CVE :`. Items of pluginID 0 are the host's open ports, not findings. docs/cli/import.md has the
 * mapping.
 */

/** v1 `severity`: 0 an open port, 1 a note, 2 a warning, 3 a hole; `Risk factor` in the data says more. */
const BY_SEVERITY: readonly Severity[] = ['info', 'info', 'medium', 'high'];
const RISK: Readonly<Record<string, Severity>> = {
  none: 'info',
  low: 'low',
  medium: 'medium',
  high: 'high',
  serious: 'high',
  critical: 'critical',
};

const SECTIONS = [
  'Synopsis',
  'Description',
  'See also',
  'Solution',
  'Risk factor',
  'Plugin output',
  'CVE',
  'BID',
  'Other references',
] as const;
type Section = (typeof SECTIONS)[number];
const SECTION_LINE = new RegExp(`^(${SECTIONS.join('|')}) :(.*)$`);

/** The `data` text's sections, when it has any; `null` for plain output (`A web server is running`). */
export function dataSections(data: string): Map<Section, string> | null {
  const out = new Map<Section, string>();
  let current: Section | undefined;
  const lines: string[] = [];
  const flush = () => {
    if (current !== undefined) out.set(current, lines.join('\n').trim());
    lines.length = 0;
  };
  for (const line of data.split('\n')) {
    const m = SECTION_LINE.exec(line);
    if (m === null) {
      lines.push(line);
      continue;
    }
    flush();
    current = m[1] as Section;
    if (m[2]!.trim() !== '') lines.push(m[2]!.trim());
  }
  flush();
  return out.size === 0 ? null : out;
}

/** `http (80/tcp)` → service, port, protocol; `general/udp` → the protocol only. */
function portOf(text: string | undefined): { service?: string; port?: number; protocol?: string } {
  const t = text?.trim() ?? '';
  const svc = /^(.*?)\s*\((\d+)\/(\w+)\)$/.exec(t);
  if (svc !== null) return { service: svc[1]!, port: Number(svc[2]), protocol: svc[3]!.toLowerCase() };
  const general = /^general\/(\w+)$/.exec(t);
  return general === null ? {} : { protocol: general[1]!.toLowerCase() };
}

const absent = (t: string | undefined) => (t === undefined || /^(n\/a|none)$/i.test(t) ? undefined : t);

function itemFinding(item: XmlNode, host: string, hostname: string | undefined): ScanFinding | null {
  const id = textOf(item, 'pluginID') ?? '0';
  if (id === '0') return null;
  const where = portOf(textOf(item, 'port'));
  // Newlines are written as the two characters \n.
  const data = (textOf(item, 'data') ?? '').replace(/\\n/g, '\n').replace(/\\r/g, '').trim();
  const sections = dataSections(data);
  const risk = sections?.get('Risk factor') ?? '';
  const word = /^(\w+)/.exec(risk)?.[1]?.toLowerCase() ?? '';
  const sev = Number(textOf(item, 'severity') ?? '1');
  const title = textOf(item, 'pluginName') ?? `Nessus plugin ${id}`;
  const description = [sections?.get('Synopsis'), sections?.get('Description')].filter((t) => t !== undefined);
  const urls = (sections?.get('See also') ?? '').split(/\s+/).filter((u) => /^https?:\/\//.test(u));
  return {
    rule_id: `nessus:${id}`,
    title,
    severity: RISK[word] ?? BY_SEVERITY[Number.isInteger(sev) && sev >= 0 && sev <= 3 ? sev : 1]!,
    host,
    ...given('hostname', hostname),
    ...given('port', where.port === undefined ? undefined : validPort(where.port)),
    ...given('protocol', where.protocol),
    ...given('service', where.service === undefined || where.service === 'general' ? undefined : where.service),
    ...given('evidence', sections === null ? data : sections.get('Plugin output')),
    ...given('description', description.join('\n\n')),
    ...given('remediation', absent(sections?.get('Solution'))),
    ...referencesOf(cveList((sections?.get('CVE') ?? '').split(/[\s,]+/)), [], urls),
    ...given('cvss', cvssOf(/CVSS Base Score\s*:\s*([\d.]+)/i.exec(risk)?.[1])),
    ...given('category', categoryOf(title)),
  };
}

/** The ReportHost being read: its fields as they arrive (HostName first). */
interface OpenHost {
  name?: string | undefined;
  hostname?: string | undefined;
  os?: string | undefined;
  start?: Date | undefined;
  end?: Date | undefined;
  ports: { port: number; protocol: string }[];
}

const HOST = ['NessusClientData', 'Report', 'ReportHost'];
const isHost = (p: readonly string[]) => p.length === 3 && HOST.every((n, i) => p[i] === n);

export async function parseNessusV1(file: string, maxBytes: number): Promise<ImportedScan> {
  const book = new ImportBook();
  const span = new TimeSpan();
  const targets: string[] = [];
  let portRange: string | undefined;
  let records = 0;
  let host: OpenHost | undefined;
  const openPorts = new Set<string>();
  const time = (node: XmlNode) => hostTime(new Map([['T', node.text]]), 'T');
  await streamXmlItems(file, maxBytes, {
    roots: ['NessusClientData'],
    format: 'Nessus v1',
    isItem: (p) =>
      (p.length === 4 && isHost(p.slice(0, 3))) ||
      (p.at(-1) === 'Target' && p.at(-2) === 'Targets') ||
      (p.length === 3 && p[1] === 'Report' && (p[2] === 'StartTime' || p[2] === 'StopTime')) ||
      (p.at(-1) === 'preference' && p.at(-2) === 'ServerPreferences'),
    onOpen: (p) => {
      if (!isHost(p)) return;
      records += 1;
      host = { ports: [] };
    },
    onClose: (p) => {
      if (!isHost(p) || host === undefined) return;
      const name = host.name ?? '';
      if (name !== '') {
        book.hosts.add(name, { hostname: host.hostname, os: host.os });
        for (const { port, protocol } of host.ports) {
          book.hosts.add(name, { port });
          if (protocol === 'tcp' || protocol === 'udp') openPorts.add(`${protocol === 'udp' ? 'U' : 'T'}:${port}`);
        }
      }
      span.add(host.start, host.end);
      host = undefined;
    },
    onItem: (_path, node) => {
      const text = node.text.replace(/\\n/g, '\n').trim();
      if (node.name === 'Target') {
        const value = textOf(node, 'value');
        if (value !== undefined && !targets.includes(value) && targets.length < 1024) targets.push(value);
      } else if (node.name === 'StartTime') span.add(time(node), undefined);
      else if (node.name === 'StopTime') span.add(undefined, time(node));
      else if (node.name === 'preference') {
        if (textOf(node, 'name') === 'port_range') portRange = textOf(node, 'value');
      } else if (host === undefined) return;
      else if (node.name === 'HostName') host.name = text;
      else if (node.name === 'dns_name') host.hostname = text.replace(/\.$/, '') || undefined;
      else if (node.name === 'netbios_name' && host.hostname === undefined && text !== '(unknown)')
        host.hostname = text || undefined;
      else if (node.name === 'os_name') host.os = text || undefined;
      else if (node.name === 'startTime') host.start = time(node);
      else if (node.name === 'stopTime') host.end = time(node);
      else if (node.name === 'ReportItem') {
        const where = portOf(textOf(node, 'port'));
        if (where.port !== undefined && validPort(where.port) !== undefined)
          host.ports.push({ port: where.port, protocol: where.protocol ?? 'tcp' });
        const f = itemFinding(node, host.name ?? '', host.hostname === host.name ? undefined : host.hostname);
        if (f !== null) book.add(f);
      }
    },
  });
  return {
    ...importedScan('nessus', {
      book,
      records,
      span,
      target: book.keeper.text(targets.join(',')),
      // The open ports the host records list were scanned, findings on them or not.
      statedPorts: [...statedRange(portRange), ...openPorts.values()],
    }),
    variant: 'v1',
  };
}
