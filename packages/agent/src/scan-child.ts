import { spawn } from 'node:child_process';
import { EXIT_TIMEOUT } from './commands/spawn.ts';
import { type KilledProcess, killTree, untilGone } from '@svc/client/process/kill-tree';
import { profileArgs } from './scan-args.ts';

export interface ScheduledScan {
  /** The id heartbeats report, passed on so the sessions carry the same one after update_schedule. */
  scheduleId: string;
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
 * killed and it ends with exit code 124.
 */
export function runScheduledScan(opts: {
  svcCommand: readonly string[];
  env: NodeJS.ProcessEnv;
  sessionsRoot: string;
  scan: ScheduledScan;
  signal: AbortSignal;
  timeoutMs: number;
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
  return new Promise((resolve) => {
    // Its own process group, so stopping it reaches nmap too, not just the svc process.
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const stop = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
    };
    opts.signal.addEventListener('abort', stop, { once: true });
    let killed: KilledProcess[] | null = null;
    // The scanner starts nmap in a process group of its own: the tree is walked, not one group.
    const timer = setTimeout(() => {
      killed = child.pid === undefined ? [] : killTree(child.pid);
    }, opts.timeoutMs);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => {
      stdout += b.toString('utf8');
    });
    child.stderr.on('data', (b: Buffer) => {
      stderr = (stderr + b.toString('utf8')).slice(-TAIL);
    });
    child.on('error', (err) => {
      stderr += `\n${err.message}`;
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      opts.signal.removeEventListener('abort', stop);
      if (killed !== null) {
        const limit = `scan timed out after SVC_SCAN_TIMEOUT (${Math.round(opts.timeoutMs / 1000)} s): the process tree was killed`;
        const outcome = { exitCode: EXIT_TIMEOUT, sessionPath: null, stderrTail: `${stderr.trim()}\n${limit}`.trim() };
        void untilGone(killed).then(() => resolve(outcome));
        return;
      }
      let sessionPath: string | null = null;
      try {
        sessionPath = (JSON.parse(stdout) as { path?: string }).path ?? null;
      } catch {
        // No JSON: the scan failed before writing a session.
      }
      resolve({ exitCode: code ?? 1, sessionPath, stderrTail: stderr.trim() });
    });
  });
}
