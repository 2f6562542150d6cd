import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CheckResult, HostContext } from './check-result.ts';
import { findProgram } from '../kit/process/find-program.ts';
import { runProgram } from './process.ts';
import { BASH } from './tools.ts';

/** The host readiness checks of the machine itself: platform, bash, MD5 hashing, cron and disk space. */

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

export function readText(file: string): string | null {
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

export function platformFacts(h: HostContext): PlatformFacts {
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

export async function bashFacts(
  h: HostContext,
): Promise<{ path: string | null; version: string | null; error?: string }> {
  const bash = findProgram('bash', h.env);
  if (bash === null) return { path: null, version: null };
  const r = await runProgram(bash, ['-c', 'echo $BASH_VERSION'], { env: h.env, timeoutMs: 5000 });
  if (r.code !== 0) return { path: bash, version: null, error: r.error ?? (r.stderr.trim() || `exit ${r.code}`) };
  return { path: bash, version: r.stdout.trim() || null };
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

export async function md5Attempts(env: NodeJS.ProcessEnv): Promise<Md5Attempt[]> {
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

export async function diskFacts(h: HostContext): Promise<{ path: string; freeBytes: number | null; error?: string }> {
  const target = existingAncestor(h.home);
  try {
    const s = await fs.promises.statfs(target);
    return { path: target, freeBytes: Number(s.bavail) * Number(s.bsize) };
  } catch (err) {
    return { path: target, freeBytes: null, error: (err as Error).message };
  }
}
