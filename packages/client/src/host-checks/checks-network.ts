import type { Settings } from '../kit/config/settings.ts';
import { jsonOf, send } from '../kit/http/request.ts';
import { healthRequest } from '../kit/portal/requests.ts';
import { endpoint, transportPolicyOf, uploadUrlOf } from '../kit/portal/target.ts';
import type { CheckResult, HostContext } from './check-result.ts';
import { readText } from './checks-system.ts';
import { findProgram } from '../kit/process/find-program.ts';
import { runProgram } from './process.ts';

/** The host readiness check of the network: the portal's health endpoint, else a default route and nameservers. */

export type PortalProbe =
  | { kind: 'answer'; url: string; status: number; ms: number; version?: string }
  | { kind: 'unreachable'; url: string; reason: string }
  | { kind: 'bad-url'; value: string; reason: string };

export interface RouteFacts {
  /** Interface of the default route (IPv4 or IPv6); null when there is none; undefined when unknown. */
  defaultRoute: string | null | undefined;
  /** Nameservers from /etc/resolv.conf (empty when none); null when it cannot be read. */
  nameservers: string[] | null;
}

/**
 * With a portal URL (CONSULTATION_API_URL from -c or the environment): GET /api/health
 * answering 200 passes; a 5xx answer warns (the network works, the portal does not); any
 * other answer, no answer or a malformed URL fails. Without a URL nothing is contacted: no
 * default route fails, otherwise warn (the route and resolver are there, but reaching the
 * portal is untested).
 */
export function networkRule(portal: PortalProbe | null, routes: RouteFacts): CheckResult {
  const name = 'network connectivity';
  if (portal !== null) {
    if (portal.kind === 'bad-url')
      return {
        name,
        status: 'fail',
        detail: `CONSULTATION_API_URL is not a portal URL (${portal.value}): ${portal.reason}`,
      };
    if (portal.kind === 'unreachable')
      return { name, status: 'fail', detail: `portal health ${portal.url} not reachable: ${portal.reason}` };
    if (portal.status === 200)
      return {
        name,
        status: 'pass',
        detail: `portal health ${portal.url} answered 200 in ${portal.ms} ms${portal.version ? ` (portal ${portal.version})` : ''}`,
      };
    if (portal.status >= 500)
      return {
        name,
        status: 'warn',
        detail: `portal health ${portal.url} answered HTTP ${portal.status}: the network works, the portal does not`,
      };
    return {
      name,
      status: 'fail',
      detail: `portal health ${portal.url} answered HTTP ${portal.status}: check CONSULTATION_API_URL`,
    };
  }
  const untested = 'portal not tested (set CONSULTATION_API_URL in the environment or a -c file)';
  if (routes.defaultRoute === null)
    return {
      name,
      status: 'fail',
      detail: `no default route: this host cannot reach a portal outside its own subnets; ${untested}`,
    };
  const route =
    routes.defaultRoute === undefined ? 'default route unknown' : `default route via ${routes.defaultRoute}`;
  const dns =
    routes.nameservers === null
      ? 'no /etc/resolv.conf'
      : routes.nameservers.length === 0
        ? 'no nameserver in /etc/resolv.conf'
        : `DNS ${routes.nameservers.join(', ')}`;
  return { name, status: 'warn', detail: `${untested}; ${route}, ${dns}` };
}

/** The interface of the default route in /proc/net/route and /proc/net/ipv6_route texts. */
export function defaultRouteOf(ipv4: string | null, ipv6: string | null): string | null | undefined {
  if (ipv4 === null && ipv6 === null) return undefined;
  for (const line of (ipv4 ?? '').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    // Iface Destination Gateway Flags …: destination 0.0.0.0 with the route up (flag 0x1).
    if (f.length >= 4 && f[1] === '00000000' && (parseInt(f[3] ?? '0', 16) & 1) === 1) return f[0] as string;
  }
  for (const line of (ipv6 ?? '').split('\n')) {
    const f = line.trim().split(/\s+/);
    // dest prefixlen src srclen nexthop metric refcnt use flags iface: ::/0 that is not a reject route.
    if (
      f.length >= 10 &&
      /^0{32}$/.test(f[0] ?? '') &&
      f[1] === '00' &&
      f[9] !== 'lo' &&
      (parseInt(f[8] ?? '0', 16) & 0x200) === 0
    )
      return f[9] as string;
  }
  return null;
}

export function nameserversOf(resolvConf: string | null): string[] | null {
  if (resolvConf === null) return null;
  return [...resolvConf.matchAll(/^\s*nameserver\s+(\S+)/gm)].map((m) => m[1] as string);
}

export async function routeFacts(h: HostContext): Promise<RouteFacts> {
  const nameservers = nameserversOf(readText('/etc/resolv.conf'));
  if (h.platform === 'darwin') {
    const route = findProgram('route', h.env) ?? '/sbin/route';
    const r = await runProgram(route, ['-n', 'get', 'default'], { env: h.env, timeoutMs: 5000 });
    const iface = /interface:\s*(\S+)/.exec(r.stdout)?.[1];
    return { defaultRoute: r.code === 0 ? (iface ?? 'gateway') : r.code === null ? undefined : null, nameservers };
  }
  return { defaultRoute: defaultRouteOf(readText('/proc/net/route'), readText('/proc/net/ipv6_route')), nameservers };
}

/** The health URL for the configured portal, or why there is none; null when no URL is configured. */
export function portalHealthUrl(
  settings: Settings,
): { url: string; uploadUrl: string } | { bad: string; reason: string } | null {
  const raw = settings.get('CONSULTATION_API_URL');
  if (raw === undefined) return null;
  try {
    const uploadUrl = uploadUrlOf(raw, transportPolicyOf(settings));
    return { url: endpoint({ uploadUrl, apiKey: null, jwt: null, timeoutS: 10 }, 'health'), uploadUrl };
  } catch (err) {
    return { bad: raw, reason: (err as Error).message };
  }
}

export async function portalProbe(h: HostContext): Promise<PortalProbe | null> {
  const target = portalHealthUrl(h.settings);
  if (target === null) return null;
  if ('bad' in target) return { kind: 'bad-url', value: target.bad, reason: target.reason };
  const timeoutMs = h.networkTimeoutMs ?? 10_000;
  try {
    const res = await send(
      healthRequest({ uploadUrl: target.uploadUrl, apiKey: null, jwt: null, timeoutS: timeoutMs / 1000 }),
      timeoutMs,
    );
    const body = jsonOf(res) as { version?: unknown } | undefined;
    const probe: PortalProbe = { kind: 'answer', url: target.url, status: res.status, ms: res.ms };
    if (typeof body?.version === 'string') probe.version = body.version;
    return probe;
  } catch (err) {
    return { kind: 'unreachable', url: target.url, reason: (err as Error).message };
  }
}
