import { Type, type Static } from '@sinclair/typebox';
import { arr, isObj, str } from './read.ts';

/**
 * What a session looked at (docs/session-file.md#coverage): the hosts that answered, the ports
 * scanned per transport, the profile and the tools. A finding of an earlier session that this
 * one does not report is resolved only when this session looked where it was; otherwise it
 * stays open, "not checked" by this session. One rule for the scanner's own tracking and the
 * portal's findings of record.
 */

/** A port list in nmap's syntax without prefixes: numbers and ranges separated by commas ("21-23,80,443"). */
const PORT_LIST = /^(?:\d{1,5}(?:-\d{1,5})?)(?:,\d{1,5}(?:-\d{1,5})?)*$/;

export const COVERAGE_PROTOCOLS = ['tcp', 'udp', 'sctp'] as const;
export type CoverageProtocol = (typeof COVERAGE_PROTOCOLS)[number];

export const CoverageBlock = Type.Object(
  {
    hosts: Type.Array(Type.String(), {
      description: 'Addresses (or names) of the hosts that answered; findings on other hosts are not checked',
    }),
    ports: Type.Object(
      Object.fromEntries(
        COVERAGE_PROTOCOLS.map((p) => [
          p,
          Type.Optional(
            Type.String({ description: `${p.toUpperCase()} ports scanned, e.g. "1-1024,3389"; absent: none` }),
          ),
        ]),
      ),
      { additionalProperties: true, description: 'Ports scanned per transport' },
    ),
    profile: Type.Optional(Type.String({ description: 'Scan profile (quick_recon, full_recon, an import format...)' })),
    tools: Type.Optional(Type.Array(Type.String(), { description: 'Tools that ran (nmap, testssl.sh, ...)' })),
    source: Type.Optional(Type.String({ description: 'What wrote the block: svc-scan, import:nessus, synthetic...' })),
  },
  { additionalProperties: true, description: 'What the session looked at (docs/session-file.md#coverage)' },
);
export type CoverageBlock = Static<typeof CoverageBlock>;

/** Sorted, merged inclusive ranges. */
export type PortRanges = readonly (readonly [number, number])[];

/** The ranges of a port list; null when it is not one (wrong syntax, a port over 65535, a reversed range). */
export function parsePortList(list: string): PortRanges | null {
  const text = list.replace(/\s+/g, '');
  if (text === '') return [];
  if (!PORT_LIST.test(text)) return null;
  const ranges: [number, number][] = [];
  for (const item of text.split(',')) {
    const [lo = 0, hi = lo] = item.split('-').map(Number);
    if (lo > hi || hi > 65535) return null;
    ranges.push([lo, hi]);
  }
  ranges.sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const r of ranges) {
    const last = merged.at(-1);
    if (last !== undefined && r[0] <= last[1] + 1) last[1] = Math.max(last[1], r[1]);
    else merged.push([r[0], r[1]]);
  }
  return merged;
}

/** A port list written back from ranges ("1-3,80"). */
export function formatPortList(ranges: PortRanges): string {
  return ranges.map(([lo, hi]) => (lo === hi ? String(lo) : `${lo}-${hi}`)).join(',');
}

/** The ranges of a list of single ports. */
export function portRangesOf(ports: Iterable<number>): PortRanges {
  return parsePortList([...new Set(ports)].filter((p) => Number.isInteger(p) && p >= 0 && p <= 65535).join(',')) ?? [];
}

function inRanges(ranges: PortRanges, port: number): boolean {
  let lo = 0;
  let hi = ranges.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [a, b] = ranges[mid]!;
    if (port < a) hi = mid - 1;
    else if (port > b) lo = mid + 1;
    else return true;
  }
  return false;
}

/** Where a finding is: its host, port and transport (port null for a host-level finding). */
export interface FindingPlace {
  host: string | null;
  port: number | null;
  protocol: string | null;
}

/** A coverage block read for lookups. */
export interface Coverage {
  /** Lower-cased host names and addresses. */
  hosts: ReadonlySet<string>;
  ports: Readonly<Partial<Record<CoverageProtocol, PortRanges>>>;
  profile: string | null;
  tools: readonly string[];
  /** What wrote the block (svc-scan, import:nessus...), null when it does not say. */
  source: string | null;
  /** True when the file carried no block and hosts were read from its findings and topology. */
  inferred: boolean;
}

const hostKey = (h: string) => h.trim().toLowerCase();

/**
 * The coverage a session file states in its `coverage` block, or null when it has none (or
 * one that is not usable: no host list, a port list that is not one).
 */
export function coverageOf(doc: unknown): Coverage | null {
  const block = isObj(doc) && isObj(doc['coverage']) ? doc['coverage'] : null;
  if (block === null || !Array.isArray(block['hosts'])) return null;
  const ports: Partial<Record<CoverageProtocol, PortRanges>> = {};
  const rawPorts = isObj(block['ports']) ? block['ports'] : {};
  for (const p of COVERAGE_PROTOCOLS) {
    const list = str(rawPorts[p]);
    if (list === null) continue;
    const ranges = parsePortList(list);
    if (ranges === null) return null;
    ports[p] = ranges;
  }
  return {
    hosts: new Set(
      arr(block['hosts'])
        .filter((h): h is string => typeof h === 'string' && h.trim() !== '')
        .map(hostKey),
    ),
    ports,
    profile: str(block['profile']),
    tools: arr(block['tools']).filter((t): t is string => typeof t === 'string'),
    source: str(block['source']),
    inferred: false,
  };
}

/**
 * The coverage of a file without a `coverage` block (scanners before it, hand-made files):
 * the hosts it names (findings, topology nodes, hosts[]), every port of each. An older
 * scanner resolved what it did not see on a host it scanned; so does this rule, and never a
 * finding on a host the file does not name.
 */
export function inferredCoverage(doc: unknown): Coverage {
  const root = isObj(doc) ? doc : {};
  const hosts = new Set<string>();
  const add = (v: unknown) => {
    if (typeof v === 'string' && v.trim() !== '') hosts.add(hostKey(v));
  };
  for (const f of arr(root['findings'])) if (isObj(f)) add(f['host'] ?? f['ip']);
  const topology = isObj(root['topology']) ? root['topology'] : {};
  for (const n of arr(topology['nodes'])) if (isObj(n)) add(n['ip']);
  for (const h of arr(root['hosts'])) add(isObj(h) ? (h['ip'] ?? h['host']) : h);
  const all: PortRanges = [[0, 65535]];
  return { hosts, ports: { tcp: all, udp: all, sctp: all }, profile: null, tools: [], source: null, inferred: true };
}

/** The file's coverage block, else what it implies. */
export function sessionCoverage(doc: unknown): Coverage {
  return coverageOf(doc) ?? inferredCoverage(doc);
}

/**
 * Whether the session looked where the finding is: its host answered and, for a finding on a
 * port, that port was scanned over its transport (tcp when the finding does not say). A
 * finding without a host is never covered: nothing says where it was.
 */
export function coversPlace(coverage: Coverage, place: FindingPlace): boolean {
  if (place.host === null || !coverage.hosts.has(hostKey(place.host))) return false;
  if (place.port === null) return true;
  const proto = (place.protocol ?? 'tcp').trim().toLowerCase();
  const ranges = coverage.ports[proto as CoverageProtocol];
  return ranges !== undefined && inRanges(ranges, place.port);
}

/** The coverage block as written into a session file. */
export function coverageBlock(c: {
  hosts: Iterable<string>;
  ports: Partial<Record<CoverageProtocol, PortRanges>>;
  profile?: string | undefined;
  tools?: readonly string[] | undefined;
  source?: string | undefined;
}): CoverageBlock {
  const ports: Record<string, string> = {};
  for (const p of COVERAGE_PROTOCOLS) {
    const r = c.ports[p];
    if (r !== undefined && r.length > 0) ports[p] = formatPortList(r);
  }
  return {
    hosts: [...new Set(c.hosts)].sort(),
    ports,
    ...(c.profile === undefined ? {} : { profile: c.profile }),
    ...(c.tools === undefined ? {} : { tools: [...c.tools] }),
    ...(c.source === undefined ? {} : { source: c.source }),
  };
}
