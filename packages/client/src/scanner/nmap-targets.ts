import { checkScanTarget, checkScanTargets, type ScanBudget, type ScanTarget } from '@svc/protocol';

/** A target refused before nmap runs; the message names the value and the reason. */
export class TargetError extends Error {
  override name = 'TargetError';
}

export type ValidTarget = ScanTarget;

function refuse(value: string, reason: string): never {
  throw new TargetError(`invalid target ${JSON.stringify(value)}: ${reason}`);
}

/**
 * One user-given target by the protocol's rule (packages/protocol/src/scan-targets.ts, the
 * portal checks run_scan with it too): an IPv4 or IPv6 address, a CIDR block, an IPv4 octet
 * range or a host name; anything else, in particular a value starting with `-`, is a TargetError.
 */
export function validateTarget(raw: string): ValidTarget {
  const checked = checkScanTarget(raw);
  if (!checked.ok) throw new TargetError(checked.message);
  return checked.target;
}

/**
 * A comma-separated target list by the protocol's rule: entries trimmed, IPv4 and IPv6 not
 * mixed (IPv6 needs `-6`), and with a budget the entry and address limits of one run. The
 * entry points (`svc scan`, svcd) pass the configured budget; `null` is for lists the scanner
 * builds itself from an already checked one.
 */
export function parseTargets(input: string | readonly string[], budget: ScanBudget | null): ValidTarget[] {
  const checked = checkScanTargets(typeof input === 'string' ? input : input.join(','), budget);
  if (!checked.ok) throw new TargetError(checked.message);
  return checked.targets;
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
