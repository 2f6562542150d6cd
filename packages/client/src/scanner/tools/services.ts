import net from 'node:net';
import { primaryAddress, primaryHostname } from '../parse/host-info.ts';
import type { NmapHost, NmapPort } from '../parse/types.ts';
import { openPorts, serviceLabel } from '../rules/finding.ts';

/** One open TCP service nmap found, addressed by the IP it reported (never a name a tool would resolve). */
export interface ServiceTarget {
  ip: string;
  hostname?: string | undefined;
  port: number;
  service?: string | undefined;
  tls: boolean;
}

const HTTP_NAMES = new Set(['http', 'https', 'http-proxy', 'http-alt', 'https-alt']);
/** Services that speak TLS from the first byte (STARTTLS ones are left to nmap's scripts). */
const TLS_NAMES = new Set(['https', 'ssl', 'imaps', 'pop3s', 'smtps', 'ldaps', 'ftps', 'https-alt']);

/**
 * A name nmap took from its port table (`method="table"`: no probe answered) is only the port
 * number's usual service; a TLS audit of it can run for minutes against a port with no TLS.
 */
function isTls(port: NmapPort): boolean {
  if (port.service?.tunnel === 'ssl') return true;
  return port.service?.method !== 'table' && TLS_NAMES.has(port.service?.name ?? '');
}

function targetsOf(hosts: readonly NmapHost[], keep: (port: NmapPort) => boolean): ServiceTarget[] {
  return hosts
    .filter((h) => h.status.state === 'up')
    .flatMap((h) => {
      const ip = primaryAddress(h);
      // Only an address nmap reported reaches a tool's argv.
      if (ip === undefined || net.isIP(ip) === 0) return [];
      const hostname = primaryHostname(h);
      return openPorts(h)
        .filter((p) => p.protocol === 'tcp' && keep(p))
        .map((p) => ({ ip, hostname, port: p.portid, service: serviceLabel(p), tls: isTls(p) }));
    });
}

/** Open TCP ports that speak TLS. */
export const tlsServices = (hosts: readonly NmapHost[]): ServiceTarget[] => targetsOf(hosts, isTls);

/** Open TCP ports that speak HTTP, with or without TLS. */
export const httpServices = (hosts: readonly NmapHost[]): ServiceTarget[] =>
  targetsOf(hosts, (p) => HTTP_NAMES.has(p.service?.name ?? ''));

/** `ip:port`, with brackets around IPv6. */
export const hostPort = (t: ServiceTarget): string => `${net.isIPv6(t.ip) ? `[${t.ip}]` : t.ip}:${t.port}`;

/** The invocation fields naming where it looks. */
export const located = (t: ServiceTarget) => ({ label: hostPort(t), host: t.ip, port: t.port, service: t.service });
