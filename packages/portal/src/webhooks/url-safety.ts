import dns from 'node:dns';
import ipaddr from 'ipaddr.js';

/** Resolve a host name to every address it has. Tests substitute their own (DNS rebinding). */
export type Resolver = (hostname: string) => Promise<string[]>;

export const systemResolver: Resolver = async (hostname) =>
  (await dns.promises.lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/** What a non-admin is told of a host that does not resolve, or resolves to a refused address. */
export const HOST_REFUSED = 'url is not allowed: its host must resolve to public addresses only';

export class UnsafeUrlError extends Error {
  /**
   * The message for callers who must not learn the portal's view of the network (non-admins):
   * neither the addresses a host resolves to nor whether it resolves at all.
   */
  readonly coarse: string;
  constructor(message: string, coarse: string = message) {
    super(message);
    this.name = 'UnsafeUrlError';
    this.coarse = coarse;
  }
}

export type CidrList = [ipaddr.IPv4 | ipaddr.IPv6, number][];

/**
 * Syntax rules for a webhook URL: HTTPS only, no credentials. The WHATWG parser already
 * normalises the octal, hex and decimal spellings of IPv4 (`https://0x7f.1/` has host
 * 127.0.0.1), so every later check sees the canonical address.
 */
export function parseWebhookUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeUrlError('url is not a valid URL');
  }
  if (url.protocol !== 'https:') throw new UnsafeUrlError('url must use https');
  if (url.username !== '' || url.password !== '') throw new UnsafeUrlError('url must not contain credentials');
  if (url.hostname === '') throw new UnsafeUrlError('url has no host');
  // Never sent, so not part of the receiver's identity: without it, duplicates compare equal.
  url.hash = '';
  return url;
}

function inAllowList(ip: ipaddr.IPv4 | ipaddr.IPv6, allow: CidrList): boolean {
  return allow.some(([range, bits]) => range.kind() === ip.kind() && ip.match(range, bits));
}

/**
 * Why an address is refused, or null when it is a public unicast address. IPv4-mapped
 * IPv6 is judged as the IPv4 address it carries; every special IPv6 range (NAT64, 6to4,
 * Teredo, unique-local, link-local, documentation, ...) is refused, as is every special
 * IPv4 range (loopback, private, link-local incl. the 169.254.169.254 metadata address,
 * CGNAT, unspecified, broadcast, multicast, documentation and reserved).
 */
export function refusalReason(address: string, allow: CidrList = []): string | null {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  if (inAllowList(ip, allow)) return null;
  const range = ip.range();
  if (range !== 'unicast') return `${ip.toString()} is not a public address (${range})`;
  // ipaddr.js calls everything it has no name for "unicast", including the deprecated
  // IPv4-compatible ::a.b.c.d (the URL parser turns [::127.0.0.1] into [::7f00:1]) and
  // unassigned space: public IPv6 unicast is 2000::/3 only.
  if (ip.kind() === 'ipv6' && !ip.match(GLOBAL_UNICAST_V6))
    return `${ip.toString()} is not a public address (reserved)`;
  return null;
}

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/**
 * RFC 6761: `localhost` and every name under it are loopback whatever a resolver says,
 * so they are judged as 127.0.0.1 and ::1 without asking DNS.
 */
function isLocalhostName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
}

function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Resolve the URL's host and require EVERY address to be public (or explicitly allowed);
 * returns the checked addresses. Used at creation, at update and at every delivery, where
 * the connection then goes to an address checked here (no second lookup).
 */
export async function checkedAddresses(url: URL, resolver: Resolver, allow: CidrList = []): Promise<string[]> {
  const host = hostOf(url);
  let addresses: string[];
  if (ipaddr.isValid(host)) addresses = [host];
  else if (isLocalhostName(host)) addresses = ['127.0.0.1', '::1'];
  else {
    try {
      addresses = await resolver(host);
    } catch {
      throw new UnsafeUrlError(`url host ${host} does not resolve`, HOST_REFUSED);
    }
  }
  if (addresses.length === 0) throw new UnsafeUrlError(`url host ${host} does not resolve`, HOST_REFUSED);
  for (const a of addresses) {
    const reason = refusalReason(a, allow);
    if (reason !== null) throw new UnsafeUrlError(`url is not allowed: ${reason}`, HOST_REFUSED);
  }
  return addresses;
}
