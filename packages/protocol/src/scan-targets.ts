/**
 * Scan targets: the one rule for what may be scanned, shared by the portal (run_scan and
 * update_schedule payloads, before queueing), `svc scan --targets` and svcd (before running).
 * A target is an IPv4 or IPv6 address, a CIDR block, an nmap IPv4 octet range or a host name;
 * a list of them is bounded by a number of entries and a total address budget per run
 * (docs/security.md#scan-targets-the-clients-output-and-plain-http,
 * docs/decisions.md#one-scan-target-rule-bounded-by-an-address-budget). Pure: refusals are returned, never thrown.
 */

export type ScanTargetKind = 'ipv4' | 'ipv6' | 'cidr4' | 'cidr6' | 'range4' | 'hostname';

export interface ScanTarget {
  value: string;
  kind: ScanTargetKind;
  /** How many addresses it covers (a host name counts as one: nmap scans its first address). */
  addresses: number;
}

/** The most addresses one run may cover, summed over its entries. */
export interface ScanBudget {
  maxAddresses: number;
}

/** One /16 of IPv4. */
export const DEFAULT_SCAN_MAX_ADDRESSES = 65_536;
/** The highest SVC_SCAN_MAX_ADDRESSES accepts: one /8. */
export const SCAN_MAX_ADDRESSES_CEILING = 16_777_216;
/** Entries of one target list at most, whatever the budget. */
export const MAX_SCAN_TARGETS = 256;
export const SCAN_BUDGET_SETTING = 'SVC_SCAN_MAX_ADDRESSES';
export const NO_SCAN_TARGETS = 'no targets were specified';
export const MIXED_SCAN_TARGETS = 'IPv4 and IPv6 targets cannot be scanned in one run';

export type ScanTargetCheck = { ok: true; target: ScanTarget } | { ok: false; message: string };
export type ScanTargetsCheck =
  | { ok: true; targets: ScanTarget[]; list: string; addresses: number }
  | { ok: false; message: string };

const HOST_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;
const RANGE_OCTET = /^(\d{1,3})(?:-(\d{1,3}))?$/;
const ALLOWED_CHARS = /^[A-Za-z0-9.:/-]+$/;
const URL_SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
const HEXTET = /^[0-9a-f]{1,4}$/i;

const quote = (value: string) => JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
const refuse = (value: string, reason: string): ScanTargetCheck => ({
  ok: false,
  message: `invalid target ${quote(value)}: ${reason}`,
});
const accept = (value: string, kind: ScanTargetKind, addresses: number): ScanTargetCheck => ({
  ok: true,
  target: { value, kind, addresses },
});

/** A decimal octet without leading zeros (which some parsers read as octal). */
function octet(text: string): number | undefined {
  if (!/^\d{1,3}$/.test(text) || (text.length > 1 && text.startsWith('0'))) return undefined;
  const n = Number(text);
  return n <= 255 ? n : undefined;
}

function isIPv4(text: string): boolean {
  const parts = text.split('.');
  return parts.length === 4 && parts.every((p) => octet(p) !== undefined);
}

/** The eight 16-bit words of an IPv6 address (a trailing dotted IPv4 allowed), or undefined. */
function ipv6Words(text: string): number[] | undefined {
  let tail: number[] = [];
  let head = text;
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.')) {
    const v4 = text.slice(lastColon + 1);
    if (!isIPv4(v4)) return undefined;
    const o = v4.split('.').map(Number) as [number, number, number, number];
    tail = [o[0] * 256 + o[1], o[2] * 256 + o[3]];
    head = text.slice(0, lastColon + 1);
    // `::1.2.3.4` leaves `::`; `1::1.2.3.4` leaves `1::`; `1:2:3:4:5:6:1.2.3.4` leaves `…6:`.
    if (!head.endsWith('::')) head = head.slice(0, -1);
  }
  const halves = head.split('::');
  if (halves.length > 2) return undefined;
  const words = (s: string) => (s === '' ? [] : s.split(':'));
  const left = words(halves[0] ?? '');
  const right = halves.length === 2 ? words(halves[1] ?? '') : [];
  if (![...left, ...right].every((w) => HEXTET.test(w))) return undefined;
  const given = left.length + right.length + tail.length;
  if (halves.length === 1 ? given !== 8 : given > 7) return undefined;
  const fill = Array<string>(8 - given).fill('0');
  return [...left, ...(halves.length === 2 ? fill : []), ...right].map((w) => Number.parseInt(w, 16)).concat(tail);
}

/** ::ffff:0:0/96: an IPv4 address in IPv6 clothing; scanning it with -6 goes nowhere useful. */
const isMapped = (w: number[]) => w.slice(0, 5).every((x) => x === 0) && w[5] === 0xffff;

/** `10.0.0.1-20` or `192.168.0-3.1-254`: the IPv4 octet ranges nmap accepts, without `*` or `-` alone. */
function range4Size(value: string): number | undefined {
  const parts = value.split('.');
  if (parts.length !== 4 || !value.includes('-')) return undefined;
  let size = 1;
  for (const p of parts) {
    const m = RANGE_OCTET.exec(p);
    if (!m) return undefined;
    const lo = octet(m[1] ?? '');
    const hi = m[2] === undefined ? lo : octet(m[2]);
    if (lo === undefined || hi === undefined || lo > hi) return undefined;
    size *= hi - lo + 1;
  }
  return size;
}

function isHostname(value: string): boolean {
  if (value.length > 253) return false;
  const labels = value.replace(/\.$/, '').split('.');
  // A top-level label without a letter looks like an address or range: nmap would read it as one.
  if (!/[a-z]/i.test(labels.at(-1) ?? '')) return false;
  return labels.every((l) => HOST_LABEL.test(l));
}

function checkCidr(value: string): ScanTargetCheck {
  const [addr = '', prefixText = '', ...rest] = value.split('/');
  if (rest.length > 0 || !/^\d{1,3}$/.test(prefixText)) return refuse(value, 'not a CIDR block');
  const prefix = Number(prefixText);
  if (isIPv4(addr)) {
    if (prefix > 32) return refuse(value, 'IPv4 prefix above 32');
    return accept(value, 'cidr4', 2 ** (32 - prefix));
  }
  const words = addr.includes(':') ? ipv6Words(addr) : undefined;
  if (words !== undefined) {
    if (prefix > 128) return refuse(value, 'IPv6 prefix above 128');
    if (isMapped(words)) return refuse(value, 'an IPv4-mapped IPv6 address: give the IPv4 address');
    return accept(value, 'cidr6', 2 ** (128 - prefix));
  }
  return refuse(value, 'not a CIDR block');
}

/**
 * One target as given (no trimming). Anything that could reach a scanner as something else
 * is refused: a leading `-` (an option), whitespace and controls, URLs, `host:port`, shell
 * or nmap syntax (`*`, `;`, quotes), out-of-range or zero-padded octets, IPv4-mapped IPv6.
 */
export function checkScanTarget(value: string): ScanTargetCheck {
  if (value === '') return refuse(value, 'empty');
  if (value.startsWith('-')) return refuse(value, 'starts with "-" (a scanner would read it as an option)');
  if (/[\s\p{Cc}]/u.test(value)) return refuse(value, 'contains whitespace or a control character');
  if (URL_SCHEME.test(value)) return refuse(value, 'a URL: give the host name or address only');
  if (!ALLOWED_CHARS.test(value))
    return refuse(value, 'contains characters outside letters, digits and ". : / -" (shell or nmap syntax)');
  if (value.split(':').length === 2)
    return refuse(value, 'host:port: give the host only (the profile or --ports selects ports)');
  if (value.includes('/')) return checkCidr(value);
  if (isIPv4(value)) return accept(value, 'ipv4', 1);
  if (value.includes(':')) {
    const words = ipv6Words(value);
    if (words === undefined) return refuse(value, 'not an IPv6 address');
    if (isMapped(words)) return refuse(value, 'an IPv4-mapped IPv6 address: give the IPv4 address');
    return accept(value, 'ipv6', 1);
  }
  const size = range4Size(value);
  if (size !== undefined) return accept(value, 'range4', size);
  if (isHostname(value)) return accept(value, 'hostname', 1);
  return refuse(value, 'not an address, CIDR block, IPv4 range or host name');
}

/**
 * What names one host (a finding's `host` or `hostname` from another scanner's file): an IPv4
 * address (no zero-padded octets), an IPv6 address (IPv4-mapped ones too: they name a host
 * even if they are not scanned as such) or an RFC 1123 host name of at most 253 characters.
 * Undefined for anything else: CIDR blocks, ranges, ports, spaces, controls, markup.
 */
export function hostKindOf(value: string): 'ipv4' | 'ipv6' | 'hostname' | undefined {
  if (isIPv4(value)) return 'ipv4';
  if (value.includes(':')) return ipv6Words(value) === undefined ? undefined : 'ipv6';
  return isHostname(value) ? 'hostname' : undefined;
}

const isV6 = (t: ScanTarget) => t.kind === 'ipv6' || t.kind === 'cidr6';

/**
 * A comma-separated target list: entries trimmed, empty ones dropped, each checked; IPv6
 * entries only with IPv6 entries (nmap needs -6 for them, and a host name is scanned over
 * IPv4); then, with a budget, at most MAX_SCAN_TARGETS entries covering at most
 * `budget.maxAddresses` addresses together. `null` checks the forms only: for lists the
 * scanner builds itself from a checked one (hosts a discovery tool found).
 */
export function checkScanTargets(input: string, budget: ScanBudget | null): ScanTargetsCheck {
  const entries = input
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  if (entries.length === 0) return { ok: false, message: NO_SCAN_TARGETS };
  if (budget !== null && entries.length > MAX_SCAN_TARGETS)
    return {
      ok: false,
      message: `too many targets: ${entries.length} entries, at most ${MAX_SCAN_TARGETS} per run`,
    };
  const targets: ScanTarget[] = [];
  for (const entry of entries) {
    const checked = checkScanTarget(entry);
    if (!checked.ok) return checked;
    targets.push(checked.target);
  }
  const v6 = targets.filter(isV6).length;
  if (v6 > 0 && v6 < targets.length) return { ok: false, message: MIXED_SCAN_TARGETS };
  // Each count is a power of two or a small product, exact as a double; the sum is exact as a bigint.
  const addresses = targets.reduce((n, t) => n + BigInt(t.addresses), 0n);
  if (budget !== null && addresses > BigInt(budget.maxAddresses))
    return {
      ok: false,
      message: `targets cover ${addresses} addresses, more than the ${budget.maxAddresses} allowed per run (${SCAN_BUDGET_SETTING})`,
    };
  return { ok: true, targets, list: entries.join(','), addresses: Number(addresses) };
}

export type ScanBudgetSetting = { ok: true; budget: ScanBudget } | { ok: false; message: string };

/** SVC_SCAN_MAX_ADDRESSES as the portal's environment or the client's settings give it; unset or blank: the default. */
export function scanBudgetOf(raw: string | undefined): ScanBudgetSetting {
  const text = raw?.trim() ?? '';
  if (text === '') return { ok: true, budget: { maxAddresses: DEFAULT_SCAN_MAX_ADDRESSES } };
  const n = Number(text);
  if (!/^\d{1,9}$/.test(text) || n < 1 || n > SCAN_MAX_ADDRESSES_CEILING)
    return {
      ok: false,
      message: `${SCAN_BUDGET_SETTING} must be a whole number from 1 to ${SCAN_MAX_ADDRESSES_CEILING} (got "${raw}")`,
    };
  return { ok: true, budget: { maxAddresses: n } };
}
