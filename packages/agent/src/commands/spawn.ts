import os from 'node:os';
import { startTimeOf } from '@svc/client/process/kill-tree';
import { runWithDeadline } from '@svc/client/process/run';

/**
 * Runs one program (argv, never shell text) under a deadline. The child leads its own process
 * group; past the deadline its whole tree is killed and the run ends with exit code 124.
 */

export const EXIT_TIMEOUT = 124;
/** The program could not be started (not found, not executable). */
export const EXIT_NOT_STARTED = 127;
/** Raw output kept per stream before the report's 10 KB cap (the report keeps the head). */
const KEEP_BYTES = 64 * 1024;

export interface ChildIdentity {
  pid: number;
  /** /proc start time, so a later start can tell this process from a reused pid. */
  startTime: string;
}

export interface ProcessRun {
  exitCode: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

export interface RunOptions {
  env: NodeJS.ProcessEnv;
  cwd?: string | undefined;
  /** Epoch milliseconds after which the tree is killed. */
  deadline: number;
  /** Called once the child runs, before anything else happens (the journal records it). */
  onStart?: (child: ChildIdentity) => void;
}

export async function runProcess(argv: readonly string[], opts: RunOptions): Promise<ProcessRun> {
  const r = await runWithDeadline(argv, {
    env: opts.env,
    cwd: opts.cwd,
    timeoutMs: Math.max(0, opts.deadline - Date.now()),
    kill: { mode: 'tree' },
    maxOutputBytes: KEEP_BYTES,
    onStart: (pid) => {
      const startTime = startTimeOf(pid);
      if (startTime !== null) opts.onStart?.({ pid, startTime });
    },
  });
  const stderr = r.error ? `${r.stderr}cannot start ${argv[0]}: ${r.error.message}\n` : r.stderr;
  const exitCode = r.timedOut
    ? EXIT_TIMEOUT
    : r.error
      ? EXIT_NOT_STARTED
      : (r.exitCode ?? 128 + signalNumber(r.signal));
  return { exitCode, stdout: r.stdout, stderr, timedOut: r.timedOut };
}

function signalNumber(sig: NodeJS.Signals | null): number {
  return sig === null ? 0 : (os.constants.signals[sig] ?? 0);
}
