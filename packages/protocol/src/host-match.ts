import { hostKindOf } from './scan-targets.ts';

/**
 * How a host filter matches (the session findings' `host` and the findings of record's `host`):
 * a whole address matches only that address, so `10.99.0.17` never finds
 * `10.99.0.170`; anything else (a name, or the start of an address such as `10.99.0.`)
 * matches the hosts whose name or address starts with it. Case does not count: host names
 * and IPv6 addresses are compared lower-cased.
 */
export type HostMatch = { kind: 'address'; value: string } | { kind: 'prefix'; value: string };

export function hostMatchOf(text: string): HostMatch {
  const value = text.trim().toLowerCase();
  const kind = hostKindOf(value);
  return kind === 'ipv4' || kind === 'ipv6' ? { kind: 'address', value } : { kind: 'prefix', value };
}

/** Whether a finding on `host` (address) / `hostname` (name) matches; the SQL of both filters says the same. */
export function hostMatches(m: HostMatch, host: string | null, hostname: string | null): boolean {
  const h = host?.toLowerCase() ?? null;
  if (m.kind === 'address') return h === m.value;
  return [h, hostname?.toLowerCase() ?? null].some((v) => v?.startsWith(m.value) === true);
}
