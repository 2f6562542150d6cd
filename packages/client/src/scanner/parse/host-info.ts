import type { HostInfo } from '../../pipeline/types.ts';
import type { NmapHost } from './types.ts';

/** The address findings are filed under: IPv4, else IPv6, else MAC. */
export function primaryAddress(host: NmapHost): string | undefined {
  for (const type of ['ipv4', 'ipv6', 'mac'] as const) {
    const a = host.addresses.find((x) => x.addrtype === type);
    if (a !== undefined) return a.addr;
  }
  return undefined;
}

/** The name a user gave (`user`), else the reverse-DNS name (`PTR`), else any. */
export function primaryHostname(host: NmapHost): string | undefined {
  const named = host.hostnames.filter((h) => h.name !== '');
  return (named.find((h) => h.type === 'user') ?? named.find((h) => h.type === 'PTR') ?? named[0])?.name;
}

/** The pipeline's topology entries: hosts that are up, with their open ports and best OS guess. */
export function toHostInfos(hosts: readonly NmapHost[]): HostInfo[] {
  const out: HostInfo[] = [];
  for (const h of hosts) {
    const ip = primaryAddress(h);
    if (ip === undefined || h.status.state !== 'up') continue;
    const best = [...h.os].sort((a, b) => b.accuracy - a.accuracy)[0];
    const open = [...new Set(h.ports.filter((p) => p.state === 'open').map((p) => p.portid))].sort((a, b) => a - b);
    out.push({
      ip,
      ...(primaryHostname(h) === undefined ? {} : { hostname: primaryHostname(h) }),
      ...(best === undefined ? {} : { os_guess: best.name }),
      open_ports: open,
    });
  }
  return out;
}
