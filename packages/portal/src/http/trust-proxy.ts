import type { Config } from '../config/index.ts';

/**
 * Fastify's trustProxy from SVC_TRUST_PROXY. Addresses go to Fastify as they are (proxy-addr
 * walks X-Forwarded-For from the right and stops at the first untrusted address). A hop count
 * is passed as a function trusting the nearest `hops` addresses: Fastify 5 treats a bare number
 * as "trust nothing", since a direct client could then write the header itself; docs/security.md#behind-a-reverse-proxy
 * requires the portal to be reachable only through the proxy then.
 */
export function trustProxyOption(
  trust: Config['trustProxy'],
): false | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trust !== 'number') return trust;
  return (_address, hop) => hop < trust;
}
