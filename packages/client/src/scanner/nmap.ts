import { access, constants } from 'node:fs/promises';
import { removedAfter } from '../kit/process/exit-on-signals.ts';
import { runWithDeadline } from '../kit/process/run.ts';
import { buildNmapArgs } from './nmap-args.ts';
import { isProfileName, type NmapProfile, PROFILES } from './nmap-profiles.ts';
import { assertInScope, parseTargets } from './nmap-targets.ts';
import { writeOwnScripts } from './nse/index.ts';
import { NmapXmlStream } from './parse/stream.ts';
import type { NmapHost, NmapProgress, NmapRunInfo } from './parse/types.ts';

export { buildNmapArgs, validatePorts } from './nmap-args.ts';
export { type NmapProfile, PROFILES } from './nmap-profiles.ts';
export { assertInScope, parseTargets, TargetError, validateTarget } from './nmap-targets.ts';

export const DEFAULT_NMAP_PATH = '/usr/bin/nmap';

/** nmap is not installed where the client looks for it. */
export class NmapMissingError extends Error {
  override name = 'NmapMissingError';
}

/** nmap exited with an error (a bad option returns 255). */
export class NmapFailedError extends Error {
  override name = 'NmapFailedError';
  readonly exitCode: number | null;
  readonly stderr: string;
  constructor(message: string, exitCode: number | null, stderr: string) {
    super(message);
    this.exitCode = exitCode;
    this.stderr = stderr;
  }
}

export interface RunNmapOptions {
  /** User-given targets, comma separated or as a list; validated before anything runs. */
  targets: string | readonly string[];
  profile: string | NmapProfile;
  /** A narrower port list than the profile's (validated). */
  ports?: string | undefined;
  /** Defaults to "running as root". */
  privileged?: boolean | undefined;
  /** When set, every target must lie inside these IPv4 CIDR blocks. */
  scope?: readonly string[] | undefined;
  /** Whole-run limit; the process group is killed when it passes. Default 2 h. */
  timeoutMs?: number | undefined;
  statsEverySeconds?: number | undefined;
  nmapPath?: string | undefined;
  /**
   * A fixed command nmap runs under, such as `['ip', 'netns', 'exec', ns]` in the test network.
   * It comes from code, never from the user.
   */
  wrapper?: readonly string[] | undefined;
  onProgress?: ((progress: NmapProgress) => void) | undefined;
  /** Receives each host as it closes; when given, hosts are not kept in the result. */
  onHost?: ((host: NmapHost) => void) | undefined;
}

export interface NmapRunResult {
  /** The exact argv run (wrapper, nmap path, arguments), for pipeline.log. */
  command: string[];
  profile: string;
  privileged: boolean;
  /** How nmap scanned, said to the user: SYN scan with OS guess as root, connect scan otherwise. */
  mode: 'syn' | 'connect';
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** false when nmap was cut short: the XML had no `</nmaprun>`. */
  complete: boolean;
  run: NmapRunInfo;
  hosts: NmapHost[];
  /** nmap's warnings such as "Failed to resolve", from stderr. */
  warnings: string[];
}

const STDERR_LIMIT = 64 * 1024;
const KILL_GRACE_MS = 5_000;

function resolveProfile(profile: string | NmapProfile): NmapProfile {
  if (typeof profile !== 'string') return profile;
  if (!isProfileName(profile)) {
    throw new Error(`unknown scan profile "${profile}": use one of ${Object.keys(PROFILES).join(', ')}`);
  }
  return PROFILES[profile];
}

async function assertNmapInstalled(path: string): Promise<void> {
  try {
    await access(path, constants.X_OK);
  } catch {
    throw new NmapMissingError(
      `nmap not found at ${path}: install it (Debian: apt-get install nmap); tools/dependency_check.sh lists what the client tools need`,
    );
  }
}

/**
 * Runs nmap with a profile's fixed argument list and no shell, streaming its XML through the
 * parser. Progress (`--stats-every`) reaches onProgress; the run ends at timeoutMs with the
 * process group killed (SIGTERM, then SIGKILL) and `timedOut`/`complete: false` in the result.
 * Refuses bad targets (TargetError) before anything starts, and throws NmapMissingError or
 * NmapFailedError (non-zero exit).
 */
export async function runNmap(opts: RunNmapOptions): Promise<NmapRunResult> {
  const profile = resolveProfile(opts.profile);
  // The forms only: the run's budget was checked where the targets came in (svc scan); a
  // discovery tool's list of live hosts may hold more entries than a user may give.
  const targets = parseTargets(opts.targets, null);
  if (opts.scope) assertInScope(targets, opts.scope);
  const privileged = opts.privileged ?? process.getuid?.() === 0;
  const argsOptions = { privileged, ports: opts.ports, statsEverySeconds: opts.statsEverySeconds };
  // Built once before anything is written, so a bad port list fails first.
  buildNmapArgs(profile, targets, { ...argsOptions, scriptDir: '' });
  const nmapPath = opts.nmapPath ?? DEFAULT_NMAP_PATH;
  await assertNmapInstalled(nmapPath);
  const own = profile.ownScripts ?? [];
  const scripts = own.length === 0 ? undefined : await writeOwnScripts(own);
  const run = () => {
    const args = buildNmapArgs(profile, targets, { ...argsOptions, scriptDir: scripts?.dir });
    return execute({ command: [...(opts.wrapper ?? []), nmapPath, ...args], nmapPath, profile, privileged }, opts);
  };
  // Removed however the run ends, a Ctrl-C of `svc scan` included.
  return scripts === undefined ? run() : removedAfter(scripts.remove, run);
}

interface Prepared {
  command: string[];
  nmapPath: string;
  profile: NmapProfile;
  privileged: boolean;
}

async function execute(
  { command, nmapPath, profile, privileged }: Prepared,
  opts: RunNmapOptions,
): Promise<NmapRunResult> {
  const hosts: NmapHost[] = [];
  const parser = new NmapXmlStream({
    onHost: opts.onHost ?? ((h) => hosts.push(h)),
    onProgress: opts.onProgress,
  });
  const startedAt = new Date().toISOString();
  let parseError: unknown;
  // nmap leads its own process group: past the deadline SIGTERM lets it write what it has, then SIGKILL.
  const r = await runWithDeadline(command, {
    env: process.env,
    timeoutMs: opts.timeoutMs ?? 2 * 60 * 60 * 1000,
    kill: { mode: 'group', graceMs: KILL_GRACE_MS },
    // The XML goes through the parser as it streams, never kept; stderr's end holds the warnings.
    maxOutputBytes: 0,
    stderrTail: STDERR_LIMIT,
    onStdout: (chunk) => {
      if (parseError !== undefined) return;
      try {
        parser.write(chunk);
      } catch (err) {
        parseError = err;
      }
    },
  });
  if (r.error !== null) throw r.error;
  const { exitCode, signal, timedOut, durationMs, stderr } = r;
  // Something on PATH named nmap that is not nmap, or an nmap that printed something else.
  if (parseError !== undefined)
    throw new NmapFailedError(
      `the output of ${nmapPath} is not nmap's XML report (${(parseError as Error).message})`,
      exitCode,
      stderr,
    );
  const run = parser.end();
  const warnings = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => /^(WARNING|Failed to resolve|Warning)/i.test(l));
  if (!timedOut && exitCode !== 0) {
    const tail = stderr.trim().split('\n').slice(-5).join('\n');
    throw new NmapFailedError(`nmap exited with ${exitCode ?? signal}: ${tail}`, exitCode, stderr);
  }
  return {
    command,
    profile: profile.name,
    privileged,
    mode: privileged ? 'syn' : 'connect',
    startedAt,
    finishedAt: new Date().toISOString(),
    durationMs,
    exitCode,
    signal,
    timedOut,
    complete: run.complete && !timedOut,
    run,
    hosts,
    warnings,
  };
}

/** One line for pipeline.log and the terminal: the command, shell-quoted for reading only. */
export function formatCommand(command: readonly string[]): string {
  return command.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", `'\\''`)}'`)).join(' ');
}
