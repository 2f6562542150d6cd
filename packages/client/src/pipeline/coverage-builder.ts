import {
  COVERAGE_PROTOCOLS,
  type CoverageBlock,
  type CoverageProtocol,
  coverageBlock,
  formatPortList,
  type NotCheckedPlace,
  parsePortList,
  type PortRanges,
} from '@svc/protocol';

/**
 * Collects what a producer of session files looked at (svc scan, the imports, the synthetic
 * generator) into the protocol's `coverage` block (packages/protocol/src/session-file/coverage.ts; docs/scanner/stages.md, "Coverage"): the hosts that
 * answered and the ports scanned per transport. The block decides which earlier findings a
 * session may resolve, so a producer adds only what it really looked at.
 */
export class CoverageBuilder {
  readonly #hosts = new Set<string>();
  readonly #ranges = new Map<CoverageProtocol, PortRanges[]>();

  addHost(host: string | undefined | null): this {
    const h = host?.trim();
    if (h) this.#hosts.add(h);
    return this;
  }

  /** A port list of one transport ("1-1024,3389"); a list that is not one is ignored. */
  addPortList(protocol: string | undefined | null, list: string | undefined | null): this {
    const p = transportOf(protocol);
    const ranges = list == null ? null : parsePortList(list);
    if (p === null || ranges === null || ranges.length === 0) return this;
    // Appended in place: a copy per call made an import of 50,000 findings take minutes.
    const lists = this.#ranges.get(p);
    if (lists === undefined) this.#ranges.set(p, [ranges]);
    else lists.push(ranges);
    return this;
  }

  addPort(protocol: string | undefined | null, port: number | undefined | null): this {
    if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65535) return this;
    return this.addPortList(protocol ?? 'tcp', String(port));
  }

  /** An nmap-style list whose `T:`/`U:` prefixes switch the transport; items before any prefix are TCP. */
  addPrefixedList(list: string): this {
    const split = splitPrefixedPorts(list);
    if (split !== null) for (const [p, l] of Object.entries(split)) this.addPortList(p, l);
    return this;
  }

  get hostCount(): number {
    return this.#hosts.size;
  }

  /** The block; `notChecked`: the checks the producer could not make where it looked. */
  block(about: {
    profile?: string | undefined;
    tools?: readonly string[] | undefined;
    source: string;
    notChecked?: readonly NotCheckedPlace[] | undefined;
  }): CoverageBlock {
    const ports: Partial<Record<CoverageProtocol, PortRanges>> = {};
    for (const [p, lists] of this.#ranges) ports[p] = parsePortList(lists.map(formatPortList).join(',')) ?? [];
    return coverageBlock({ hosts: this.#hosts, ports, ...about });
  }
}

function transportOf(protocol: string | undefined | null): CoverageProtocol | null {
  const p = (protocol ?? '').trim().toLowerCase();
  return (COVERAGE_PROTOCOLS as readonly string[]).includes(p) ? (p as CoverageProtocol) : null;
}

/**
 * `T:21-23,80,U:161` → `{tcp: '21-23,80', udp: '161'}`: the prefix sticks until the next one, as
 * in nmap's `-p`; items before any prefix are TCP. Null when an item is not a port or a range.
 */
export function splitPrefixedPorts(list: string): Partial<Record<'tcp' | 'udp', string>> | null {
  const out: Record<'tcp' | 'udp', string[]> = { tcp: [], udp: [] };
  let current: 'tcp' | 'udp' = 'tcp';
  for (const raw of list.split(',')) {
    let item = raw.trim();
    if (item === '') continue;
    const prefix = /^([TU]):/i.exec(item);
    if (prefix !== null) {
      current = prefix[1]!.toUpperCase() === 'U' ? 'udp' : 'tcp';
      item = item.slice(2);
    }
    if (!/^\d{1,5}(?:-\d{1,5})?$/.test(item)) return null;
    out[current].push(item);
  }
  return {
    ...(out.tcp.length === 0 ? {} : { tcp: out.tcp.join(',') }),
    ...(out.udp.length === 0 ? {} : { udp: out.udp.join(',') }),
  };
}
