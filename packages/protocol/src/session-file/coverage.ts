import { Type, type Static } from '@sinclair/typebox';
import { arr, isObj, str } from './read.ts';

/**
 * What a session looked at (docs/session-file.md#coverage): the hosts that answered, the ports
 * scanned per transport, the profile and the tools, and the checks it could not make where it
 * looked. A finding of an earlier session that this one does not report is resolved only when
 * this session looked where it was and made its check there; otherwise it stays open, "not
 * checked" by this session. One rule for the scanner's own tracking and the portal's findings
 * of record.
 */

/** A port list in nmap's syntax without prefixes: numbers and ranges separated by commas ("21-23,80,443"). */
const PORT_LIST = /^(?:\d{1,5}(?:-\d{1,5})?)(?:,\d{1,5}(?:-\d{1,5})?)*$/;

export const COVERAGE_PROTOCOLS = ['tcp', 'udp', 'sctp'] as const;
export type CoverageProtocol = (typeof COVERAGE_PROTOCOLS)[number];

export const NotCheckedEntry = Type.Object(
  {
    host: Type.String({ description: 'Address (or name) of the host' }),
    port: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535, description: 'absent: every port of the host' })),
    protocol: Type.Optional(Type.String({ description: 'Transport of the port; tcp when absent' })),
    rules: Type.Optional(
      Type.Array(Type.String(), { description: 'Rule ids whose check was not made there; absent: no check was' }),
    ),
    reason: Type.Optional(Type.String({ description: 'Why, for people (e.g. "ssh-dss: no key after 3 tries")' })),
  },
  { additionalProperties: true },
);
export type NotCheckedEntry = Static<typeof NotCheckedEntry>;

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
    not_checked: Type.Optional(
      Type.Array(NotCheckedEntry, {
        description:
          'Checks the session could not make where it looked (a host key it could not fetch): the findings of those checks there stay open',
      }),
    ),
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
  /** The checks not made, by place (placeKey). */
  notChecked: ReadonlyMap<string, NotCheckedPlace>;
}

/** A place where some checks (`rules`; null: every one) were not made. */
export interface NotCheckedPlace {
  /** Lower-cased. */
  host: string;
  /** null: every port of the host. */
  port: number | null;
  protocol: CoverageProtocol;
  rules: readonly string[] | null;
  reason: string | null;
}

const hostKey = (h: string) => h.trim().toLowerCase();
const placeKey = (host: string, protocol: string, port: number | null) => `${host}\n${protocol}\n${port ?? '*'}`;

/**
 * The block's `not_checked` entries by place, read so that doubt keeps a finding open: an entry
 * with a host is kept whatever else is wrong with it (a port that is not one means every port,
 * rules that are not a list of strings mean every check), and two entries of a place add up.
 */
function notCheckedOf(v: unknown): Map<string, NotCheckedPlace> {
  const out = new Map<string, NotCheckedPlace>();
  for (const e of arr(v)) {
    if (!isObj(e) || typeof e['host'] !== 'string' || e['host'].trim() === '') continue;
    const host = hostKey(e['host']);
    const p = e['port'];
    const port = typeof p === 'number' && Number.isInteger(p) && p >= 0 && p <= 65535 ? p : null;
    const named = str(e['protocol'])?.trim().toLowerCase() ?? 'tcp';
    const protocol = (COVERAGE_PROTOCOLS as readonly string[]).includes(named) ? (named as CoverageProtocol) : 'tcp';
    const r = e['rules'];
    const rules = Array.isArray(r) && r.every((x) => typeof x === 'string') ? (r as string[]) : null;
    const key = placeKey(host, protocol, port);
    const held = out.get(key);
    const merged =
      held === undefined ? rules : held.rules === null || rules === null ? null : [...held.rules, ...rules];
    out.set(key, {
      host,
      port,
      protocol,
      rules: merged === null ? null : [...new Set(merged)].sort(),
      reason: held?.reason ?? str(e['reason']),
    });
  }
  return out;
}

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
    notChecked: notCheckedOf(block['not_checked']),
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
  return {
    hosts,
    ports: { tcp: all, udp: all, sctp: all },
    profile: null,
    tools: [],
    source: null,
    inferred: true,
    notChecked: new Map(),
  };
}

/** The file's coverage block, else what it implies. */
export function sessionCoverage(doc: unknown): Coverage {
  return coverageOf(doc) ?? inferredCoverage(doc);
}

/**
 * Whether the session looked where the finding is and made its check there: its host answered
 * and, for a finding on a port, that port was scanned over its transport (tcp when the finding
 * does not say), and no `not_checked` entry of the place (or of its whole host) names the
 * finding's rule. A finding whose rule is unknown (`rule` null or left out) is not covered
 * where any check was not made. A finding without a host is never covered: nothing says where
 * it was.
 */
export function coversPlace(coverage: Coverage, place: FindingPlace, rule?: string | null): boolean {
  if (place.host === null) return false;
  const host = hostKey(place.host);
  if (!coverage.hosts.has(host)) return false;
  const proto = (place.protocol ?? 'tcp').trim().toLowerCase();
  if (coverage.notChecked.size > 0 && checkNotMade(coverage, host, proto, place.port, rule ?? null)) return false;
  if (place.port === null) return true;
  const ranges = coverage.ports[proto as CoverageProtocol];
  return ranges !== undefined && inRanges(ranges, place.port);
}

function checkNotMade(coverage: Coverage, host: string, proto: string, port: number | null, rule: string | null) {
  // A host-level finding is looked for on the host as a whole: any entry of the host may be its check.
  const places =
    port === null
      ? [...coverage.notChecked.values()].filter((p) => p.host === host)
      : [coverage.notChecked.get(placeKey(host, proto, port)), coverage.notChecked.get(placeKey(host, proto, null))];
  return places.some((p) => p !== undefined && (p.rules === null || rule === null || p.rules.includes(rule)));
}

/** The coverage block as written into a session file. */
export function coverageBlock(c: {
  hosts: Iterable<string>;
  ports: Partial<Record<CoverageProtocol, PortRanges>>;
  profile?: string | undefined;
  tools?: readonly string[] | undefined;
  source?: string | undefined;
  notChecked?: Iterable<NotCheckedPlace> | undefined;
}): CoverageBlock {
  const ports: Record<string, string> = {};
  for (const p of COVERAGE_PROTOCOLS) {
    const r = c.ports[p];
    if (r !== undefined && r.length > 0) ports[p] = formatPortList(r);
  }
  const notChecked = [...(c.notChecked ?? [])].map(
    (p): NotCheckedEntry => ({
      host: p.host,
      ...(p.port === null ? {} : { port: p.port }),
      protocol: p.protocol,
      ...(p.rules === null ? {} : { rules: [...p.rules] }),
      ...(p.reason === null ? {} : { reason: p.reason }),
    }),
  );
  return {
    hosts: [...new Set(c.hosts)].sort(),
    ports,
    ...(c.profile === undefined ? {} : { profile: c.profile }),
    ...(c.tools === undefined ? {} : { tools: [...c.tools] }),
    ...(c.source === undefined ? {} : { source: c.source }),
    ...(notChecked.length === 0 ? {} : { not_checked: notChecked }),
  };
}
