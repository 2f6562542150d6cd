import { fileURLToPath } from 'node:url';
import type { ScanFinding } from '@svc/client/engine';
import type { HostRole, NetlabHost } from './index.ts';
import { HARDENED, notPlantedNote, PLANTED } from './planted.ts';

/**
 * The detection table: each planted weakness found or missed, then every
 * finding nobody planted. The body is a pure function of the findings, with no timings and a
 * fixed order, so the test that scans the network can rebuild it and compare it with the file.
 */

export const TABLE_FILE = fileURLToPath(new URL('../../docs/scanner/detection-table.md', import.meta.url));
export const REGENERATE = 'npm run scanner:detection-table';

const START = '<!-- detection-table:start -->';
const END = '<!-- detection-table:end -->';
const EVIDENCE_CHARS = 72;

type Hosts = Record<HostRole, Pick<NetlabHost, 'ip'>>;

/** Parts of the evidence that change from run to run or machine to machine: pids, clocks, kernels. */
const VOLATILE: readonly [RegExp, string][] = [
  [/\b(Process ID|Uptime|Server time|Operating System|Used CPU \(\w+\)|snmp-sysdescr): [^|;]*/gi, '$1: … '],
  [/ uptime \d+ seconds/gi, ''],
  [/\bscanned \S+/g, 'scanned …'],
  [/\b[A-Z][a-z]{2} +\d{1,2} +\d{2}:\d{2}\b/g, '…'],
];

/**
 * A short, stable excerpt of a finding's evidence: its first line without the port (a column of
 * its own), nmap's detection method, a bare service name in front, and the parts that change.
 */
function excerpt(evidence: string): string {
  const line = (evidence.split('\n').find((l) => l.trim() !== '') ?? '')
    .replace(/^(?:tcp|udp)\/\d+ /, '')
    .replace(/ \[(?:probed|table)[^\]]*\]/, '');
  const parts = line.split('; ');
  const kept = parts.length > 1 && /^[\w/-]+$/.test(parts[0] ?? '') ? parts.slice(1) : parts;
  return cell(VOLATILE.reduce((s, [re, to]) => s.replace(re, to), kept.join('; ')));
}

/** One table cell: one line, shortened, with the characters Markdown tables need escaped. */
function cell(text: string, max = EVIDENCE_CHARS): string {
  const line = text
    .trim()
    .replace(/\s+/g, ' ')
    .replace(/[|; ]+$/, '');
  const short = line.length > max ? `${line.slice(0, max - 1)}…` : line;
  return short.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('|', '\\|');
}

const row = (cells: readonly (string | number | undefined)[]) => `| ${cells.map((c) => c ?? '').join(' | ')} |`;

const byPort = (a: ScanFinding, b: ScanFinding) =>
  (a.port ?? 0) - (b.port ?? 0) || String(a.protocol ?? '').localeCompare(String(b.protocol ?? ''));

/** The table's body (between its markers) for these findings on the network's hosts. */
export function detectionTableBody(findings: readonly ScanFinding[], hosts: Hosts): string {
  const roles = Object.keys(hosts) as HostRole[];
  const roleOf = new Map(roles.map((r) => [hosts[r].ip, r]));
  const used = new Set<ScanFinding>();

  const planted = PLANTED.map((p) => {
    const hits = findings
      .filter((f) => f.host === hosts[p.host].ip && f.service === p.service && f.rule_id === p.rule)
      .sort(byPort);
    for (const h of hits) used.add(h);
    const first = hits[0];
    const result = first === undefined ? '**missed**' : hits.length === 1 ? 'found' : `found ×${hits.length}`;
    const observed =
      first?.severity === undefined ? '–' : first.severity === p.severity ? first.severity : `**${first.severity}**`;
    const port = first === undefined ? '–' : `${first.protocol ?? 'tcp'}/${first.port ?? '–'}`;
    return row([
      p.host,
      p.service,
      `\`${p.rule}\``,
      p.severity,
      result,
      observed,
      port,
      first ? excerpt(first.evidence ?? '') : '',
    ]);
  });

  const unplanned = findings
    .filter((f) => !used.has(f))
    .map((f) => {
      const role = roleOf.get(f.host ?? '');
      const known = role === undefined || role === HARDENED ? null : notPlantedNote(role, f.service, f.rule_id);
      return { f, role: role ?? f.host ?? '?', known };
    })
    .sort(
      (a, b) =>
        roles.indexOf(a.role as HostRole) - roles.indexOf(b.role as HostRole) ||
        String(a.f.service ?? '').localeCompare(String(b.f.service ?? '')) ||
        String(a.f.rule_id ?? '').localeCompare(String(b.f.rule_id ?? '')) ||
        byPort(a.f, b.f),
    )
    .map(({ f, role, known }) =>
      row([
        role,
        f.service ?? '',
        `\`${f.rule_id ?? ''}\``,
        f.severity,
        known ? 'not planted' : '**false positive**',
        `${f.protocol ?? 'tcp'}/${f.port ?? '–'}`,
        known ? cell(known, 200) : excerpt(f.evidence ?? ''),
      ]),
    );

  const missed = planted.filter((r) => r.includes('**missed**')).length;
  const falsePositives = unplanned.filter((r) => r.includes('**false positive**')).length;
  return [
    `${PLANTED.length} planted weaknesses: ${PLANTED.length - missed} found, ${missed} missed. ` +
      `${falsePositives} false positives, ${unplanned.length - falsePositives} real findings not planted.`,
    '',
    '### Planted weaknesses',
    '',
    row(['host', 'service', 'rule', 'expected', 'result', 'observed', 'port', 'evidence (excerpt)']),
    row(['---', '---', '---', '---', '---', '---', '---', '---']),
    ...planted,
    '',
    '### Findings nobody planted',
    '',
    ...(unplanned.length === 0
      ? ['None.']
      : [
          row(['host', 'service', 'rule', 'severity', 'verdict', 'port', 'evidence (excerpt) or note']),
          row(['---', '---', '---', '---', '---', '---', '---']),
          ...unplanned,
        ]),
  ].join('\n');
}

/** The whole file: a header with the versions and the date, then the body between its markers. */
export function detectionTableFile(body: string, meta: { nmap: string; debian: string; date: string }): string {
  return [
    '# Detection table',
    '',
    `Generated ${meta.date} by \`${REGENERATE}\` with nmap ${meta.nmap} on Debian ${meta.debian}.`,
    '',
    'Each weakness planted in the test network (docs/scanner/test-network.md) is looked up by host,',
    'detected service and rule, never by port: found or **missed**, with the severity observed (in bold',
    'when it differs from the expected one). Then every other finding of the same scan: on the hardened',
    'host each is a **false positive**; on a weak host a real finding nobody planted is "not planted".',
    '`packages/client/tests/scanner-netlab.slow.test.ts` rebuilds the part between the markers from its own',
    'scan and fails when it differs from this file.',
    '',
    START,
    body,
    END,
    '',
  ].join('\n');
}

/** The body between the markers, or null when the file has none. */
export function tableBodyOf(markdown: string): string | null {
  const a = markdown.indexOf(START);
  const b = markdown.indexOf(END);
  if (a < 0 || b < a) return null;
  return markdown
    .slice(a + START.length, b)
    .replace(/^\n/, '')
    .replace(/\n$/, '');
}
