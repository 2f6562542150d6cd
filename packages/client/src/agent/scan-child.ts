import { spawn } from 'node:child_process';
import { profileArgs } from './scan-args.ts';

export interface ScheduledScan {
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
 * ends it (shutdown).
 */
export function runScheduledScan(opts: {
  svcCommand: readonly string[];
  env: NodeJS.ProcessEnv;
  sessionsRoot: string;
  scan: ScheduledScan;
  signal: AbortSignal;
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
    ...(scan.profile === undefined ? {} : { SVC_SCHEDULE_PROFILE: scan.profile }),
  };
  return new Promise((resolve) => {
    const child = spawn(cmd, args, {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      signal: opts.signal,
      killSignal: 'SIGTERM',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => {
      stdout += b.toString('utf8');
    });
    child.stderr.on('data', (b: Buffer) => {
      stderr = (stderr + b.toString('utf8')).slice(-TAIL);
    });
    child.on('error', (err) => {
      if ((err as NodeJS.ErrnoException).code !== 'ABORT_ERR') stderr += `\n${err.message}`;
    });
    child.on('close', (code) => {
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
