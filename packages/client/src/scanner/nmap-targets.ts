import { isIPv4, isIPv6 } from 'node:net';

/** A target refused before nmap runs; the message names the value and the reason. */
export class TargetError extends Error {
  override name = 'TargetError';
}

export type TargetKind = 'ipv4' | 'ipv6' | 'cidr4' | 'cidr6' | 'range4' | 'hostname';

export interface ValidTarget {
  value: string;
  kind: TargetKind;
}

/** Largest networks one target may name: a /16 of IPv4, a /112 of IPv6. */
export const MIN_IPV4_PREFIX = 16;
export const MIN_IPV6_PREFIX = 112;

const HOST_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;
const RANGE_OCTET = /^(\d{1,3})(?:-(\d{1,3}))?$/;

function refuse(value: string, reason: string): never {
  throw new TargetError(`invalid target ${JSON.stringify(value)}: ${reason}`);
}

function octet(text: string): number | undefined {
  if (!/^\d{1,3}$/.test(text) || (text.length > 1 && text.startsWith('0'))) return undefined;
  const n = Number(text);
  return n <= 255 ? n : undefined;
}

/** `10.0.0.1-20` or `192.168.0-3.1-254`: the IPv4 octet ranges nmap accepts, without commas or `*`. */
function isRange4(value: string): boolean {
  const parts = value.split('.');
  if (parts.length !== 4 || !value.includes('-')) return false;
  return parts.every((p) => {
    const m = RANGE_OCTET.exec(p);
    if (!m) return false;
    const lo = octet(m[1] ?? '');
    const hi = m[2] === undefined ? lo : octet(m[2]);
    return lo !== undefined && hi !== undefined && lo <= hi;
  });
}

function isHostname(value: string): boolean {
  if (value.length > 253) return false;
  const labels = value.replace(/\.$/, '').split('.');
  // A top-level label without a letter looks like an address or range: nmap would read it as one.
  if (!/[a-z]/i.test(labels.at(-1) ?? '')) return false;
  return labels.every((l) => HOST_LABEL.test(l));
}

/**
 * Checks one user-given target against the forms nmap accepts and this tool allows: an IPv4 or
 * IPv6 address, a CIDR block no larger than MIN_*_PREFIX, an IPv4 octet range, or an RFC 1123
 * host name. Anything else, in particular a value starting with `-` (nmap would read an option),
 * whitespace, commas, quotes or shell characters, is refused with a TargetError.
 */
export function validateTarget(raw: string): ValidTarget {
  const value = raw;
  if (value === '') refuse(value, 'empty');
  if (value.startsWith('-')) refuse(value, 'starts with "-" (nmap would read it as an option)');
  if (/[\s\u0000-\u001f\u007f]/.test(value)) refuse(value, 'contains whitespace or a control character');
  if (!/^[A-Za-z0-9.:/-]+$/.test(value)) {
    refuse(value, 'contains characters outside letters, digits and ". : / -" (shell or nmap syntax)');
  }
  if (isIPv4(value)) return { value, kind: 'ipv4' };
  if (isIPv6(value)) return { value, kind: 'ipv6' };
  if (value.includes('/')) {
    const [addr = '', prefixText = '', ...rest] = value.split('/');
    if (rest.length > 0 || !/^\d{1,3}$/.test(prefixText)) refuse(value, 'not a CIDR block');
    const prefix = Number(prefixText);
    if (isIPv4(addr)) {
      if (prefix > 32) refuse(value, 'IPv4 prefix above 32');
      if (prefix < MIN_IPV4_PREFIX) refuse(value, `IPv4 network larger than /${MIN_IPV4_PREFIX}`);
      return { value, kind: 'cidr4' };
    }
    if (isIPv6(addr)) {
      if (prefix > 128) refuse(value, 'IPv6 prefix above 128');
      if (prefix < MIN_IPV6_PREFIX) refuse(value, `IPv6 network larger than /${MIN_IPV6_PREFIX}`);
      return { value, kind: 'cidr6' };
    }
    refuse(value, 'not a CIDR block');
  }
  if (isRange4(value)) return { value, kind: 'range4' };
  if (value.includes(':')) refuse(value, 'not an IPv6 address');
  if (isHostname(value)) return { value, kind: 'hostname' };
  refuse(value, 'not an address, CIDR block, IPv4 range or host name');
}

/**
 * Splits a comma-separated target list and validates each entry. IPv4 and IPv6 cannot share
 * one nmap run (IPv6 needs `-6`), so a mixed list is refused.
 */
export function parseTargets(input: string | readonly string[]): ValidTarget[] {
  const items = typeof input === 'string' ? input.split(',') : input.flatMap((t) => t.split(','));
  const targets = items.map((t) => validateTarget(t.trim() === t ? t : refuse(t, 'surrounding whitespace')));
  if (targets.length === 0) throw new TargetError('no target given');
  const v6 = targets.filter((t) => isV6(t)).length;
  if (v6 > 0 && v6 < targets.length) throw new TargetError('IPv4 and IPv6 targets cannot be scanned in one run');
  return targets;
}

export function isV6(target: ValidTarget): boolean {
  return target.kind === 'ipv6' || target.kind === 'cidr6';
}

function toNumber(ip: string): number {
  return ip.split('.').reduce((n, o) => n * 256 + Number(o), 0);
}

/** The first and last IPv4 address a target covers, or undefined for names and IPv6. */
function span4(t: ValidTarget): [number, number] | undefined {
  if (t.kind === 'ipv4') return [toNumber(t.value), toNumber(t.value)];
  if (t.kind === 'cidr4') {
    const [addr = '', p = ''] = t.value.split('/');
    const size = 2 ** (32 - Number(p));
    const base = Math.floor(toNumber(addr) / size) * size;
    return [base, base + size - 1];
  }
  if (t.kind === 'range4') {
    const lo = t.value.split('.').map((o) => o.split('-')[0]);
    const hi = t.value.split('.').map((o) => o.split('-').at(-1));
    return [toNumber(lo.join('.')), toNumber(hi.join('.'))];
  }
  return undefined;
}

/**
 * Refuses any target outside the given IPv4 CIDR scope (host names too: they could resolve
 * anywhere). The test network passes its own subnet so a test can never scan beyond it.
 */
export function assertInScope(targets: readonly ValidTarget[], scope: readonly string[]): void {
  const spans = scope.map((s) => span4(validateTarget(s)) ?? refuse(s, 'scope must be IPv4'));
  for (const t of targets) {
    const span = span4(t);
    if (!span || !spans.some(([lo, hi]) => span[0] >= lo && span[1] <= hi)) {
      refuse(t.value, `outside the allowed scope ${scope.join(', ')}`);
    }
  }
}
