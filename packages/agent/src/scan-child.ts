import { runWithDeadline, signalGroup } from '@svc/client/kit';
import { EXIT_NOT_STARTED, EXIT_TIMEOUT } from './commands/spawn.ts';
import { withPrivateTmp } from './private-tmp.ts';
import { profileArgs } from './scan-args.ts';

export interface ScheduledScan {
  /** The id heartbeats report, passed on so the sessions carry the same one after update_schedule. */
  scheduleId: string;
  /** A portal schedule's name (local ones are named by their config file). */
  name?: string | undefined;
  targets: string;
  cron: string;
  profile: string | undefined;
  ports: string | undefined;
  upload: boolean;
}

export interface ScanOutcome {
  exitCode: number;
  /** The session directory `svc scan --json` printed, when it got that far. */
  sessionPath: string | null;
  /** The last lines of stderr, for the log. */
  stderrTail: string;
}

const TAIL = 2000;

/**
 * One `svc scan` child for a schedule: fixed argument list (no shell), the schedule passed as
 * SVC_SCHEDULE_* so the session carries `is_scheduled: true, scheduled_by: daemon`. `signal`
 * ends it (shutdown); past `timeoutMs` (SVC_SCAN_TIMEOUT) its whole tree, nmap included, is
 * killed and it ends with exit code 124. Its temp files go with it (private-tmp.ts).
 */
export async function runScheduledScan(opts: {
  svcCommand: readonly string[];
  env: NodeJS.ProcessEnv;
  sessionsRoot: string;
  scan: ScheduledScan;
  signal: AbortSignal;
  timeoutMs: number;
  warn: (message: string) => void;
}): Promise<ScanOutcome> {
  const { scan } = opts;
  const [cmd, ...prefix] = opts.svcCommand as [string, ...string[]];
  const args = [
    ...prefix,
    'scan',
    '--targets',
    scan.targets,
    ...profileArgs(scan.profile),
    ...(scan.ports === undefined ? [] : ['--ports', scan.ports]),
    '--sessions-dir',
    opts.sessionsRoot,
    '--json',
    ...(scan.upload ? ['--upload'] : []),
  ];
  const env: NodeJS.ProcessEnv = {
    ...opts.env,
    SVC_SCHEDULED_BY: 'daemon',
    SVC_SCHEDULE_CRON: scan.cron,
    SVC_SCHEDULE_ID: scan.scheduleId,
    ...(scan.profile === undefined ? {} : { SVC_SCHEDULE_PROFILE: scan.profile }),
  };
  let pid: number | undefined;
  // Shutdown: SIGTERM to the child's group (nmap included) lets svc end the scan its own way.
  const stop = () => signalGroup(pid, 'SIGTERM');
  opts.signal.addEventListener('abort', stop, { once: true });
  // The scanner starts nmap in a process group of its own: past the deadline the tree is
  // walked and killed, not one group.
  const r = await withPrivateTmp(env, opts.warn, (scanEnv) =>
    runWithDeadline([cmd, ...args], {
      env: scanEnv,
      timeoutMs: opts.timeoutMs,
      kill: { mode: 'tree' },
      // The end of stderr says why a scan failed; 4 bytes a character at most.
      stderrTail: TAIL * 4,
      onStart: (started) => {
        pid = started;
      },
    }),
  ).finally(() => opts.signal.removeEventListener('abort', stop));
  const stderr = (r.error === null ? r.stderr : `${r.stderr}\n${r.error.message}`).slice(-TAIL);
  if (r.timedOut) {
    const limit = `scan timed out after SVC_SCAN_TIMEOUT (${Math.round(opts.timeoutMs / 1000)} s): the process tree was killed`;
    return { exitCode: EXIT_TIMEOUT, sessionPath: null, stderrTail: `${stderr.trim()}\n${limit}`.trim() };
  }
  let sessionPath: string | null = null;
  try {
    sessionPath = (JSON.parse(r.stdout) as { path?: string }).path ?? null;
  } catch {
    // No JSON: the scan failed before writing a session.
  }
  return { exitCode: r.error === null ? (r.exitCode ?? 1) : EXIT_NOT_STARTED, sessionPath, stderrTail: stderr.trim() };
}
