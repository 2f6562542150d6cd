import { severityOfCvss } from '@svc/protocol';
import type { ScanFinding } from '../pipeline/types.ts';
import { attr, child, childrenNamed, type XmlNode } from '../scanner/parse/xml-node.ts';
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
import { streamXmlItems } from './xml-items.ts';

/**
 * Greenbone/OpenVAS report XML, as GSA's XML report format and gvmd's get_reports answer write
 * it: report → report → results → result (host, port `443/tcp` or `general/tcp`, nvt with oid,
 * name, tags, solution and refs, threat, severity, qod, description), with the task, target,
 * host details, scan_start and scan_end beside the results. docs/cli/import.md has the mapping.
 */

/** nvt `tags`: `key=value|key=value`, values never holding `|`. */
function tagsOf(text: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (text ?? '').split('|')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(at + 1).trim() !== '') out.set(part.slice(0, at), part.slice(at + 1).trim());
  }
  return out;
}

/** The numeric severity when present (-1 false positive, 0 log), else the threat word. */
function severityOf(result: XmlNode): Severity | null {
  const score = Number(textOf(result, 'severity'));
  if (textOf(result, 'severity') !== undefined && Number.isFinite(score))
    return score < 0 ? null : severityOfCvss(score);
  const threat = (textOf(result, 'threat') ?? 'log').toLowerCase();
  if (threat === 'false positive' || threat === 'error') return null;
  return (['critical', 'high', 'medium', 'low'] as const).find((s) => s === threat) ?? 'info';
}

function resultFinding(result: XmlNode, severity: Severity): ScanFinding | null {
  const hostNode = child(result, 'host');
  const ip = hostNode?.text.split('\n')[0]?.trim() ?? '';
  if (ip === '') return null;
  const nvt = child(result, 'nvt');
  const tags = tagsOf(textOf(nvt, 'tags'));
  const [portText, protocol] = (textOf(result, 'port') ?? '').split('/');
  const port = Number(portText);
  const refs = childrenNamed(child(nvt ?? result, 'refs') ?? result, 'ref');
  const refIds = (type: string) => refs.filter((r) => attr(r, 'type') === type).map((r) => attr(r, 'id') ?? '');
  const title = textOf(nvt, 'name') ?? textOf(result, 'name') ?? 'Greenbone result';
  const qod = Number(textOf(child(result, 'qod'), 'value'));
  const description = [tags.get('summary'), tags.get('insight'), tags.get('impact')].filter((t) => t !== undefined);
  const score = Number(textOf(result, 'severity'));
  return {
    rule_id: `openvas:${attr(nvt ?? result, 'oid') ?? '0'}`,
    title,
    severity,
    host: ip,
    ...given('hostname', textOf(hostNode, 'hostname')),
    ...given('port', validPort(port)),
    ...given('protocol', protocol?.trim()),
    ...given('evidence', textOf(result, 'description')),
    ...given('description', [...new Set(description)].join('\n\n')),
    ...given('remediation', textOf(nvt, 'solution') ?? tags.get('solution')),
    ...referencesOf(
      cveList(refIds('cve')),
      [],
      refIds('url').filter((u) => /^https?:\/\//.test(u)),
    ),
    ...given('cvss', score > 0 ? cvssOf(String(score)) : undefined),
    ...given('qod', Number.isFinite(qod) ? qod : undefined),
    ...given('category', categoryOf(title, textOf(nvt, 'family'))),
  };
}

/**
 * The port ranges a report states its target was scanned on, when it carries them: the target's
 * port list as GMP writes it (`port_list/port_ranges/port_range` with `start`, `end`, `type`) or
 * a `port_range` text (`T:1-65535,U:161`). GSA's XML report names the target only, so most files
 * state nothing and the ports of the results count alone (docs/cli/import.md, "Coverage").
 */
function statedPortRanges(target: XmlNode | undefined): string[] {
  if (target === undefined) return [];
  const text = textOf(target, 'port_range');
  const ranges = childrenNamed(child(child(target, 'port_list') ?? target, 'port_ranges') ?? target, 'port_range')
    .map((r) => {
      const start = textOf(r, 'start');
      const end = textOf(r, 'end') ?? start;
      const type = (textOf(r, 'type') ?? 'tcp').toLowerCase();
      if (start === undefined || (type !== 'tcp' && type !== 'udp')) return null;
      return `${type === 'udp' ? 'U' : 'T'}:${start === end ? start : `${start}-${end}`}`;
    })
    .filter((r) => r !== null);
  return [...(text === undefined ? [] : [text]), ...ranges];
}

const INFO_ELEMENTS = new Set(['host', 'task', 'scan_start', 'scan_end', 'gmp', 'omp']);

export async function parseOpenvas(file: string, maxBytes: number): Promise<ImportedScan> {
  const book = new ImportBook();
  let target: string | undefined;
  let version: string | undefined;
  const stated: string[] = [];
  const span = new TimeSpan();
  let records = 0;
  const time = (node: XmlNode) => {
    const t = Date.parse(node.text);
    return Number.isNaN(t) ? undefined : new Date(t);
  };
  await streamXmlItems(file, maxBytes, {
    roots: ['report', 'get_reports_response'],
    format: 'Greenbone/OpenVAS report',
    isItem: (p) =>
      (p.at(-1) === 'result' && p.at(-2) === 'results') || (p.at(-2) === 'report' && INFO_ELEMENTS.has(p.at(-1)!)),
    onItem: (_path, node) => {
      if (node.name === 'result') {
        records += 1;
        const severity = severityOf(node);
        const f = severity === null ? null : resultFinding(node, severity);
        if (f !== null) book.add(f);
      } else if (node.name === 'host') {
        const ip = textOf(node, 'ip');
        if (ip === undefined) return;
        const detail = (name: string) =>
          childrenNamed(node, 'detail')
            .find((d) => textOf(d, 'name') === name)
            ?.children.find((c) => c.name === 'value')?.text;
        book.hosts.add(ip, { hostname: detail('hostname'), os: detail('best_os_txt') });
      } else if (node.name === 'task') {
        target = textOf(child(node, 'target'), 'name') ?? target;
        // Kept until the end, so counted as kept text: a file of many tasks stays bounded.
        for (const range of statedPortRanges(child(node, 'target'))) stated.push(book.keeper.text(range)!);
      } else if (node.name === 'scan_start') {
        span.add(time(node), undefined);
      } else if (node.name === 'scan_end') {
        span.add(undefined, time(node));
      } else {
        version = textOf(node, 'version') ?? version;
      }
    },
  });
  return importedScan('openvas', { book, records, span, target, version, statedPorts: stated });
}
