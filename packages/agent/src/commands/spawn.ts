import os from 'node:os';
import { StringDecoder } from 'node:string_decoder';
import { EXIT_CANCELLED } from '@svc/protocol';
import { runWithDeadline, startTimeOf } from '@svc/client/kit';

/**
 * Runs one program (argv, never shell text) under a deadline. The child leads its own process
 * group; past the deadline its whole tree is killed and the run ends with exit code 124; when
 * `signal` aborts (the portal cancelled the command) the tree is killed likewise and the run
 * ends with EXIT_CANCELLED (130).
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
  /** Killed because `signal` aborted (a cancellation), not because the deadline passed. */
  cancelled?: boolean;
}

export interface RunOptions {
  env: NodeJS.ProcessEnv;
  cwd?: string | undefined;
  /** Epoch milliseconds after which the tree is killed. */
  deadline: number;
  /** Called once the child runs, before anything else happens (the journal records it). */
  onStart?: (child: ChildIdentity) => void;
  /**
   * Every stderr line as it comes (without its newline); a line it answers true for was taken
   * (svc's progress lines) and is left out of the run's stderr. The rest is kept as before.
   */
  onStderrLine?: ((line: string) => boolean) | undefined;
  /** Aborted when the portal cancels the command: the tree is killed at once. */
  signal?: AbortSignal | undefined;
}

export async function runProcess(argv: readonly string[], opts: RunOptions): Promise<ProcessRun> {
  const lines = opts.onStderrLine === undefined ? undefined : stderrLines(opts.onStderrLine);
  const r = await runWithDeadline(argv, {
    env: opts.env,
    cwd: opts.cwd,
    timeoutMs: Math.max(0, opts.deadline - Date.now()),
    kill: { mode: 'tree' },
    maxOutputBytes: KEEP_BYTES,
    abort: opts.signal,
    onStderr: lines?.add,
    onStart: (pid) => {
      const startTime = startTimeOf(pid);
      if (startTime !== null) opts.onStart?.({ pid, startTime });
    },
  });
  const kept = lines === undefined ? r.stderr : lines.end();
  const stderr = r.error ? `${kept}cannot start ${argv[0]}: ${r.error.message}\n` : kept;
  // runWithDeadline reports an abort like a deadline: the signal tells which it was.
  const cancelled = r.timedOut && opts.signal?.aborted === true;
  const exitCode = cancelled
    ? EXIT_CANCELLED
    : r.timedOut
      ? EXIT_TIMEOUT
      : r.error
        ? EXIT_NOT_STARTED
        : (r.exitCode ?? 128 + signalNumber(r.signal));
  return {
    exitCode,
    stdout: r.stdout,
    stderr,
    timedOut: r.timedOut && !cancelled,
    ...(cancelled ? { cancelled } : {}),
  };
}

function signalNumber(sig: NodeJS.Signals | null): number {
  return sig === null ? 0 : (os.constants.signals[sig] ?? 0);
}

/** stderr split into lines as it streams: taken lines dropped, the others kept (the head, KEEP_BYTES). */
function stderrLines(take: (line: string) => boolean) {
  const decoder = new StringDecoder('utf8');
  let partial = '';
  let kept = '';
  const keep = (text: string) => {
    if (kept.length < KEEP_BYTES) kept += text.slice(0, KEEP_BYTES - kept.length);
  };
  const lines = (text: string) => {
    const parts = (partial + text).split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) if (!take(line)) keep(`${line}\n`);
  };
  return {
    add: (chunk: Buffer) => lines(decoder.write(chunk)),
    /** The kept text; a last line without its newline is judged too. */
    end(): string {
      lines(decoder.end());
      if (partial !== '' && !take(partial)) keep(partial);
      partial = '';
      return kept;
    },
  };
}
