import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Settings } from '../config/settings.ts';
import { jsonOf, send } from '../http/request.ts';
import { healthRequest } from '../portal/requests.ts';
import { endpoint, transportPolicyOf, uploadUrlOf } from '../portal/target.ts';
import { findProgram } from '../process/find-program.ts';
import { runProgram } from './process.ts';
import {
  BASH,
  detectTools,
  missingOf,
  toolsOfTier,
  type Installable,
  type ToolSpec,
  type ToolStatus,
} from './tools.ts';

/**
 * The eight host readiness checks of pi_validate.sh (docs/cli.md). Each
 * check gathers facts from the host (probe) and hands them to a pure rule that decides
 * pass/warn/fail and the one-line detail; the rules are unit-tested, the probes are exercised
 * by running the real tool. The rules are documented in docs/cli/pi_validate.md.
 */
export type CheckStatus = 'pass' | 'warn' | 'fail';

export const CHECK_NAMES = [
  'platform',
  'bash version',
  'core dependencies',
  'optional dependencies',
  'MD5 hashing',
  'cron',
  'disk space',
  'network connectivity',
] as const;
export type CheckName = (typeof CHECK_NAMES)[number];

export interface CheckResult {
  name: CheckName;
  status: CheckStatus;
  detail: string;
  /** What `--fix` installs for this check (not part of the JSON output). */
  fix?: Installable[];
}

export interface HostContext {
  env: NodeJS.ProcessEnv;
  /** HOME: its filesystem is the one whose free space is checked. */
  home: string;
  platform: NodeJS.Platform;
  arch: string;
  settings: Settings;
  /** Timeout of the portal health request. */
  networkTimeoutMs?: number;
}

// ---------------------------------------------------------------- platform

export interface PlatformFacts {
  platform: NodeJS.Platform;
  arch: string;
  /** /etc/os-release PRETTY_NAME (Linux) or a macOS description. */
  osName: string | null;
  /** /proc/device-tree/model, e.g. "Raspberry Pi 4 Model B Rev 1.4". */
  model: string | null;
}

const PLATFORM_LABEL: Partial<Record<NodeJS.Platform, string>> = { linux: 'Linux', darwin: 'macOS' };

/** Linux and macOS pass (any architecture); everything else fails. */
export function platformRule(f: PlatformFacts): CheckResult {
  const label = PLATFORM_LABEL[f.platform];
  if (label === undefined)
    return {
      name: 'platform',
      status: 'fail',
      detail: `${f.platform} ${f.arch} is not supported: the scanner runs on Linux (Raspberry Pi OS, Debian, Ubuntu, Fedora, Alpine) and macOS`,
    };
  const parts = [`${label} ${f.arch}`];
  if (f.osName) parts[0] += ` (${f.osName})`;
  if (f.model) parts.push(f.model.startsWith('Raspberry Pi') ? f.model : `model: ${f.model}`);
  return { name: 'platform', status: 'pass', detail: parts.join(', ') };
}

function readText(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** PRETTY_NAME from an os-release file's text. */
export function prettyNameOf(osRelease: string | null): string | null {
  const m = osRelease === null ? null : /^PRETTY_NAME=(?:"([^"]*)"|'([^']*)'|(.*))$/m.exec(osRelease);
  return m ? (m[1] ?? m[2] ?? m[3] ?? '').trim() || null : null;
}

/** The device-tree model string without its trailing NUL. */
export function modelOf(raw: string | null): string | null {
  if (raw === null) return null;
  const s = raw.replace(/\0+$/, '').trim();
  return s === '' ? null : s;
}

function platformFacts(h: HostContext): PlatformFacts {
  if (h.platform === 'darwin')
    return { platform: h.platform, arch: h.arch, osName: `Darwin ${os.release()}`, model: null };
  return {
    platform: h.platform,
    arch: h.arch,
    osName: prettyNameOf(readText('/etc/os-release') ?? readText('/usr/lib/os-release')),
    model: modelOf(readText('/proc/device-tree/model') ?? readText('/sys/firmware/devicetree/base/model')),
  };
}

// ---------------------------------------------------------------- bash

export const MIN_BASH_MAJOR = 4;

/** bash found and its $BASH_VERSION ≥ 4 passes; missing, unreadable or older fails. */
export function bashRule(f: { path: string | null; version: string | null; error?: string }): CheckResult {
  const name = 'bash version';
  if (f.path === null)
    return {
      name,
      status: 'fail',
      detail: 'bash not found on the PATH: bash 4 or later runs the scanner and its hooks',
      fix: [BASH],
    };
  const m = f.version === null ? null : /^(\d+)\.(\d+)/.exec(f.version.trim());
  if (m === null)
    return {
      name,
      status: 'fail',
      detail: `could not read $BASH_VERSION from ${f.path}${f.error ? `: ${f.error}` : ''}`,
    };
  const version = (f.version as string).trim();
  if (Number(m[1]) < MIN_BASH_MAJOR)
    return {
      name,
      status: 'fail',
      detail: `bash ${version} (${f.path}) is too old: ${MIN_BASH_MAJOR}.0 or later is required (associative arrays, mapfile)`,
      fix: [BASH],
    };
  return { name, status: 'pass', detail: `bash ${version} (${f.path})` };
}

async function bashFacts(h: HostContext): Promise<{ path: string | null; version: string | null; error?: string }> {
  const bash = findProgram('bash', h.env);
  if (bash === null) return { path: null, version: null };
  const r = await runProgram(bash, ['-c', 'echo $BASH_VERSION'], { env: h.env, timeoutMs: 5000 });
  if (r.code !== 0) return { path: bash, version: null, error: r.error ?? (r.stderr.trim() || `exit ${r.code}`) };
  return { path: bash, version: r.stdout.trim() || null };
}

// ---------------------------------------------------------------- dependencies

export interface NmapRun {
  /** First line of `nmap --version`, e.g. "7.93". */
  version: string | null;
  /** Why nmap did not run, when it did not. */
  error?: string;
}

const capabilityList = (tools: ToolSpec[]) => tools.map((t) => `${t.capability} (${t.id})`).join('; ');

/**
 * Required (nmap) missing or not running: fail. A core tool missing: warn, naming the lost
 * capability. Otherwise pass.
 */
export function coreDependenciesRule(statuses: ToolStatus[], nmap: NmapRun | null): CheckResult {
  const name = 'core dependencies';
  const relevant = statuses.filter((s) => s.spec.tier === 'required' || s.spec.tier === 'core');
  const missingRequired = missingOf(relevant, 'required');
  const missingCore = missingOf(relevant, 'core');
  const fix = [...missingRequired, ...missingCore];
  const coreNote =
    missingCore.length > 0
      ? `; missing core tools: ${missingCore.map((t) => t.id).join(', ')}, losing ${capabilityList(missingCore)}`
      : '';
  if (missingRequired.length > 0)
    return {
      name,
      status: 'fail',
      detail: `missing required: ${missingRequired.map((t) => t.id).join(', ')} (nothing can be scanned without it)${coreNote}`,
      fix,
    };
  const nmapStatus = relevant.find((s) => s.spec.id === 'nmap');
  if (nmapStatus?.path && nmap !== null && nmap.version === null)
    return {
      name,
      status: 'fail',
      detail: `nmap (${nmapStatus.path}) does not run: ${nmap.error ?? 'no version in its output'}${coreNote}`,
      fix,
    };
  const nmapText = nmapStatus?.path ? `nmap ${nmap?.version ?? ''}`.trim() + ` (${nmapStatus.path})` : 'nmap';
  if (missingCore.length > 0) return { name, status: 'warn', detail: `${nmapText}${coreNote}`, fix };
  const core = relevant.filter((s) => s.spec.tier === 'core').map((s) => s.spec.id);
  return { name, status: 'pass', detail: `${nmapText}; core tools present: ${core.join(', ')}` };
}

/** All optional tools present: pass; otherwise warn, listing the skipped capabilities. */
export function optionalDependenciesRule(statuses: ToolStatus[]): CheckResult {
  const name = 'optional dependencies';
  const optional = statuses.filter((s) => s.spec.tier === 'optional');
  const missing = missingOf(optional);
  const present = optional.filter((s) => s.path !== null).map((s) => s.spec.id);
  if (missing.length === 0)
    return { name, status: 'pass', detail: `all ${optional.length} optional tools present: ${present.join(', ')}` };
  const presentNote = present.length > 0 ? ` (present: ${present.join(', ')})` : '';
  return {
    name,
    status: 'warn',
    detail: `${missing.length} of ${optional.length} missing${presentNote}; skipped capabilities: ${capabilityList(missing)}`,
  };
}

/** The version from `nmap --version` output ("Nmap version 7.93 ( https://nmap.org )"). */
export function nmapVersionOf(output: string): string | null {
  return /Nmap version (\S+)/i.exec(output)?.[1] ?? null;
}

async function nmapRun(nmapPath: string | null, env: NodeJS.ProcessEnv): Promise<NmapRun | null> {
  if (nmapPath === null) return null;
  const r = await runProgram(nmapPath, ['--version'], { env, timeoutMs: 10_000 });
  const version = r.code === 0 ? nmapVersionOf(r.stdout) : null;
  return version !== null
    ? { version }
    : { version: null, error: r.error ?? (r.stderr.trim().split('\n')[0] || `exit ${r.code}`) };
}

// ---------------------------------------------------------------- MD5

export const MD5_INPUT = 'abc';
/** RFC 1321 test suite: MD5("abc"). */
export const MD5_DIGEST = '900150983cd24fb0d6963f7d28e17f72';
export const MD5_TOOLS = ['md5sum', 'md5'] as const;

export interface Md5Attempt {
  tool: string;
  path: string;
  output: string | null;
  error?: string;
}

/**
 * Pass when md5sum (Linux) or md5 (macOS) hashes the RFC 1321 input "abc" to its known
 * digest; fail when neither is on the PATH or neither gives the right digest (schedule ids
 * `sched_<12 hex>` are MD5-derived).
 */
export function md5Rule(attempts: Md5Attempt[]): CheckResult {
  const name = 'MD5 hashing';
  if (attempts.length === 0)
    return {
      name,
      status: 'fail',
      detail:
        'neither md5sum nor md5 is on the PATH: MD5-derived schedule ids cannot be computed (md5sum is in coreutils)',
    };
  for (const a of attempts) {
    if (a.output !== null && digestIn(a.output) === MD5_DIGEST)
      return { name, status: 'pass', detail: `${a.tool} (${a.path}) gives the known digest of "${MD5_INPUT}"` };
  }
  const why = attempts
    .map(
      (a) =>
        `${a.tool} ${a.output === null ? `did not run (${a.error ?? 'failed'})` : `gave ${digestIn(a.output) ?? JSON.stringify(a.output.trim().slice(0, 60))}`}`,
    )
    .join('; ');
  return { name, status: 'fail', detail: `no working MD5 tool: ${why}; expected ${MD5_DIGEST}` };
}

function digestIn(output: string): string | null {
  return /\b[0-9a-f]{32}\b/i.exec(output)?.[0].toLowerCase() ?? null;
}

async function md5Attempts(env: NodeJS.ProcessEnv): Promise<Md5Attempt[]> {
  const attempts: Md5Attempt[] = [];
  for (const tool of MD5_TOOLS) {
    const p = findProgram(tool, env);
    if (p === null) continue;
    const r = await runProgram(p, [], { env, input: MD5_INPUT, timeoutMs: 5000 });
    const attempt: Md5Attempt = { tool, path: p, output: r.code === 0 ? r.stdout : null };
    if (r.code !== 0) attempt.error = r.error ?? (r.stderr.trim() || `exit ${r.code}`);
    attempts.push(attempt);
    if (attempt.output !== null && digestIn(attempt.output) === MD5_DIGEST) break;
  }
  return attempts;
}

// ---------------------------------------------------------------- cron

export interface CronFacts {
  platform: NodeJS.Platform;
  crontab: string | null;
  /** A running cron daemon ("cron (pid 42)"); null when none; undefined when it cannot be told (no /proc). */
  daemon: string | null | undefined;
  /** The command that installs crontab here, when known. */
  installHint?: string;
}

/**
 * crontab present and a cron daemon running (Linux) or crontab present (macOS, where launchd
 * starts cron on demand): pass. No crontab, or no daemon: warn (scheduling can also be done by
 * the svcd daemon, so cron is never a failure).
 */
export function cronRule(f: CronFacts): CheckResult {
  const name = 'cron';
  if (f.crontab === null)
    return {
      name,
      status: 'warn',
      detail: `crontab not found: cron-scheduled scans are unavailable (svcd's own schedules still run)${f.installHint ? `; install: ${f.installHint}` : ''}`,
    };
  if (f.platform === 'darwin')
    return { name, status: 'pass', detail: `crontab (${f.crontab}); launchd starts cron on demand` };
  if (f.daemon === undefined)
    return {
      name,
      status: 'warn',
      detail: `crontab (${f.crontab}) present; cannot tell whether a cron daemon runs (no /proc)`,
    };
  if (f.daemon === null)
    return {
      name,
      status: 'warn',
      detail: `crontab (${f.crontab}) present but no cron daemon (cron, crond, cronie, fcron) is running: cron-scheduled scans will not start (e.g. systemctl enable --now cron)`,
    };
  return { name, status: 'pass', detail: `crontab (${f.crontab}); ${f.daemon} running` };
}

const CRON_DAEMONS = new Set(['cron', 'crond', 'cronie', 'fcron', 'dcron', 'anacron']);

/** A running cron daemon found through /proc/<pid>/comm; undefined without /proc. */
export function findCronDaemon(proc = '/proc'): string | null | undefined {
  let entries: string[];
  try {
    entries = fs.readdirSync(proc).filter((e) => /^\d+$/.test(e));
  } catch {
    return undefined;
  }
  if (entries.length === 0) return undefined;
  for (const pid of entries) {
    const comm = readText(path.join(proc, pid, 'comm'))?.trim();
    if (comm !== undefined && CRON_DAEMONS.has(comm)) return `${comm} (pid ${pid})`;
  }
  return null;
}

// ---------------------------------------------------------------- disk

/** Below this much free space a scan's output may not fit: fail. */
export const DISK_FAIL_BYTES = 100 * 1024 * 1024;
/** Below this, a few weeks of sessions, logs and reports may not fit: warn. */
export const DISK_WARN_BYTES = 1024 * 1024 * 1024;

export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 || Number.isInteger(v) ? v : v.toFixed(1)} ${units[i]}`;
}

/** Free space (available to non-root users) on the filesystem of HOME: fail < 100 MiB ≤ warn < 1 GiB ≤ pass. */
export function diskRule(f: { path: string; freeBytes: number | null; error?: string }): CheckResult {
  const name = 'disk space';
  if (f.freeBytes === null)
    return { name, status: 'warn', detail: `cannot read free space of ${f.path}: ${f.error ?? 'unknown error'}` };
  const text = `${formatBytes(f.freeBytes)} free on the filesystem of ${f.path}`;
  if (f.freeBytes < DISK_FAIL_BYTES)
    return {
      name,
      status: 'fail',
      detail: `${text}: below the ${formatBytes(DISK_FAIL_BYTES)} minimum, scans cannot store their results`,
    };
  if (f.freeBytes < DISK_WARN_BYTES)
    return { name, status: 'warn', detail: `${text}: below the recommended ${formatBytes(DISK_WARN_BYTES)}` };
  return { name, status: 'pass', detail: text };
}

/** The path itself or its nearest existing ancestor (HOME may not exist yet). */
function existingAncestor(p: string): string {
  let cur = path.resolve(p);
  while (!fs.existsSync(cur)) {
    const up = path.dirname(cur);
    if (up === cur) break;
    cur = up;
  }
  return cur;
}

async function diskFacts(h: HostContext): Promise<{ path: string; freeBytes: number | null; error?: string }> {
  const target = existingAncestor(h.home);
  try {
    const s = await fs.promises.statfs(target);
    return { path: target, freeBytes: Number(s.bavail) * Number(s.bsize) };
  } catch (err) {
    return { path: target, freeBytes: null, error: (err as Error).message };
  }
}

// ---------------------------------------------------------------- network

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

async function routeFacts(h: HostContext): Promise<RouteFacts> {
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

async function portalProbe(h: HostContext): Promise<PortalProbe | null> {
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

// ---------------------------------------------------------------- all checks

/** Runs the eight checks (concurrently; results in CHECK_NAMES order). Read-only: installs nothing. */
export async function runChecks(h: HostContext, opts: { cronInstallHint?: string } = {}): Promise<CheckResult[]> {
  const statuses = detectTools(h.env);
  const nmapPath = statuses.find((s) => s.spec.id === 'nmap')?.path ?? null;
  const [bash, nmap, md5, disk, portal, routes] = await Promise.all([
    bashFacts(h),
    nmapRun(nmapPath, h.env),
    md5Attempts(h.env),
    diskFacts(h),
    portalProbe(h),
    routeFacts(h),
  ]);
  const cron: CronFacts = {
    platform: h.platform,
    crontab: findProgram('crontab', h.env),
    daemon: h.platform === 'darwin' ? null : findCronDaemon(),
  };
  if (opts.cronInstallHint !== undefined) cron.installHint = opts.cronInstallHint;
  return [
    platformRule(platformFacts(h)),
    bashRule(bash),
    coreDependenciesRule(statuses, nmap),
    optionalDependenciesRule(statuses),
    md5Rule(md5),
    cronRule(cron),
    diskRule(disk),
    networkRule(portal, routes),
  ];
}

/** What each check would do, for `--dry-run`: only PATH lookups, no program run, nothing contacted. */
export function describeChecks(h: HostContext): { name: CheckName; probes: string }[] {
  const req = toolsOfTier('required').concat(toolsOfTier('core'));
  const bash = findProgram('bash', h.env) ?? 'bash';
  const md5 = MD5_TOOLS.map((t) => findProgram(t, h.env) ?? t);
  const health = portalHealthUrl(h.settings);
  const network =
    health === null
      ? 'CONSULTATION_API_URL not set: read the default route (/proc/net/route, /proc/net/ipv6_route) and /etc/resolv.conf; no request'
      : 'bad' in health
        ? `CONSULTATION_API_URL is malformed (${health.reason}): would fail`
        : `GET ${health.url} (timeout ${(h.networkTimeoutMs ?? 10_000) / 1000} s)`;
  return [
    {
      name: 'platform',
      probes: 'read the OS and architecture, /etc/os-release and /proc/device-tree/model (Raspberry Pi model)',
    },
    { name: 'bash version', probes: `run ${bash} -c 'echo $BASH_VERSION' (needs ${MIN_BASH_MAJOR}.0 or later)` },
    {
      name: 'core dependencies',
      probes: `look up ${req.map((t) => t.id).join(', ')} on the PATH; run nmap --version (nmap missing fails, a core tool missing warns)`,
    },
    {
      name: 'optional dependencies',
      probes: `look up ${toolsOfTier('optional')
        .map((t) => t.id)
        .join(', ')} on the PATH (missing ones warn as skipped capabilities)`,
    },
    { name: 'MD5 hashing', probes: `hash "${MD5_INPUT}" with ${md5.join(' or ')}, expect ${MD5_DIGEST}` },
    { name: 'cron', probes: 'look up crontab on the PATH and a running cron daemon in /proc' },
    {
      name: 'disk space',
      probes: `statfs ${h.home} (fail below ${formatBytes(DISK_FAIL_BYTES)} free, warn below ${formatBytes(DISK_WARN_BYTES)})`,
    },
    { name: 'network connectivity', probes: network },
  ];
}

/** The distinct installables the failing or warning checks ask --fix for. */
export function fixItems(results: CheckResult[]): Installable[] {
  const seen = new Set<string>();
  const items: Installable[] = [];
  for (const r of results) {
    for (const i of r.fix ?? []) {
      if (seen.has(i.id)) continue;
      seen.add(i.id);
      items.push(i);
    }
  }
  return items;
}

export function summaryOf(results: CheckResult[]): {
  total: number;
  pass: number;
  warn: number;
  fail: number;
  result: CheckStatus;
} {
  const count = (s: CheckStatus) => results.filter((r) => r.status === s).length;
  const fail = count('fail');
  const warn = count('warn');
  return {
    total: results.length,
    pass: count('pass'),
    warn,
    fail,
    result: fail > 0 ? 'fail' : warn > 0 ? 'warn' : 'pass',
  };
}
