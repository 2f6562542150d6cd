import { QUICK_PORTS } from '../nmap-profiles.ts';
import { type ValidTarget, validateTarget } from '../nmap-targets.ts';
import type { DiscoveryTool } from './types.ts';

/**
 * masscan before nmap on large IPv4 target lists: a stateless SYN sweep of the scan's TCP ports
 * finds the live hosts and their open ports, so nmap then scans only those. It needs root (raw
 * sockets) and sends every probe to the router's MAC address, which it finds from the default
 * route of the namespace it runs in; masscan has its own TCP stack, so the kernel answers the
 * replies with resets, which does not affect what it records.
 */

/** Above this many addresses masscan runs first: for a /24 or less nmap's own host discovery is as quick. */
export const MASSCAN_MIN_ADDRESSES = 257;
/** Packets per second: quick on a LAN, modest for routers and firewalls in the path. */
const RATE = '5000';
/** Seconds masscan waits for late replies after the last probe. */
const WAIT = '3';
/** The most /24-wide pieces an octet range may expand into (masscan has no octet-range syntax). */
const MAX_PIECES = 1024;

/** One target as masscan ranges: an address, a CIDR block, or `a.b.c.x-a.b.c.y` per octet combination. */
function masscanRanges(t: ValidTarget): string[] | undefined {
  if (t.kind === 'ipv4' || t.kind === 'cidr4') return [t.value];
  if (t.kind !== 'range4') return undefined;
  const octets = t.value.split('.').map((o) => o.split('-').map(Number));
  const [a = [], b = [], c = [], d = []] = octets;
  const span = (r: number[]) => (r[1] ?? (r[0] as number)) - (r[0] as number) + 1;
  if (span(a) * span(b) * span(c) > MAX_PIECES) return undefined;
  const out: string[] = [];
  const from = (r: number[]) => r[0] as number;
  const to = (r: number[]) => r[1] ?? (r[0] as number);
  for (let x = from(a); x <= to(a); x++) {
    for (let y = from(b); y <= to(b); y++) {
      for (let z = from(c); z <= to(c); z++) out.push(`${x}.${y}.${z}.${from(d)}-${x}.${y}.${z}.${to(d)}`);
    }
  }
  return out;
}

function addressCount(range: string): number {
  if (range.includes('/')) return 2 ** (32 - Number(range.split('/')[1]));
  if (!range.includes('-')) return 1;
  const [lo = '', hi = ''] = range.split('-');
  return Number(hi.split('.').at(-1)) - Number(lo.split('.').at(-1)) + 1;
}

/** Every target as masscan ranges, or undefined when one is a host name, IPv6 or too fragmented. */
function toRanges(targets: readonly string[]): string[] | undefined {
  const ranges: string[] = [];
  for (const raw of targets) {
    let t: ValidTarget;
    try {
      t = validateTarget(raw);
    } catch {
      return undefined;
    }
    const r = masscanRanges(t);
    if (r === undefined) return undefined;
    ranges.push(...r);
  }
  return ranges;
}

/** The TCP entries of an nmap port list (`T:21-23,80,U:161` → `21-23,80`); UDP is left to nmap. */
function tcpPorts(spec: string): string {
  let udp = false;
  const tcp: string[] = [];
  for (const item of spec.split(',')) {
    let p = item.trim();
    if (/^[TU]:/.test(p)) {
      udp = p.startsWith('U:');
      p = p.slice(2);
    }
    if (udp || !/^\d{1,5}(-\d{1,5})?$/.test(p)) continue;
    if (p.split('-').every((n) => Number(n) >= 1 && Number(n) <= 65535)) tcp.push(p);
  }
  return tcp.join(',');
}

/** `-oL` lines: `open tcp <port> <address> <timestamp>`. */
function parseList(stdout: string): { host: string; ports: number[] }[] {
  const byHost = new Map<string, Set<number>>();
  for (const line of stdout.split('\n')) {
    const m = /^open tcp (\d+) (\d{1,3}(?:\.\d{1,3}){3}) \d+$/.exec(line.trim());
    if (m === null) continue;
    const ports = byHost.get(m[2] as string) ?? new Set<number>();
    ports.add(Number(m[1]));
    byHost.set(m[2] as string, ports);
  }
  const num = (ip: string) => ip.split('.').reduce((n, o) => n * 256 + Number(o), 0);
  return [...byHost]
    .sort(([a], [b]) => num(a) - num(b))
    .map(([host, ports]) => ({ host, ports: [...ports].sort((a, b) => a - b) }));
}

export const masscan: DiscoveryTool = {
  kind: 'discovery',
  name: 'masscan',
  debianPackage: 'masscan',
  capability: `Fast discovery of large IPv4 ranges (over ${MASSCAN_MIN_ADDRESSES - 1} addresses, as root) before nmap`,
  timeoutMs: 2 * 60 * 60_000,
  wants(targets, ctx) {
    if (!ctx.privileged) return false;
    const ranges = toRanges(targets);
    if (ranges === undefined) return false;
    return (
      ranges.reduce((n, r) => n + addressCount(r), 0) >= MASSCAN_MIN_ADDRESSES &&
      tcpPorts(ctx.ports ?? QUICK_PORTS) !== ''
    );
  },
  plan(targets, ctx) {
    const ranges = toRanges(targets) ?? [];
    const ports = tcpPorts(ctx.ports ?? QUICK_PORTS);
    return {
      // One retry: a probe lost on a busy link would leave a live host out of nmap's scan.
      args: ['-p', ports, '--rate', RATE, '--retries', '1', '--wait', WAIT, '--open-only', '-oL', '-', ...ranges],
      label: `${ranges.length === 1 ? ranges[0] : `${ranges.length} ranges`} tcp ${ports}`,
    };
  },
  parse(output) {
    return parseList(output.stdout);
  },
  sweptPorts(ctx) {
    return tcpPorts(ctx.ports ?? QUICK_PORTS);
  },
};
