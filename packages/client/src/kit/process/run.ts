import { spawn } from 'node:child_process';
import { type KilledProcess, killTree, untilGone } from './kill-tree.ts';

/**
 * Running one program (argv, never shell text) under a deadline: the client's one spawn-with-
 * timeout. The child leads its own process group, so a deadline reaches everything it started:
 * `group` sends SIGTERM to the group and SIGKILL after a grace period (a scanner gets to write
 * what it has), `tree` SIGKILLs the process, its descendants and their groups at once
 * (kill-tree.ts) and the run ends only when all of them are gone. The client exiting kills the
 * group as well. Never rejects: a program that cannot start is `error`.
 */

export interface RunOptions {
  env?: NodeJS.ProcessEnv | undefined;
  cwd?: string | undefined;
  /** Text written to stdin, which is then closed; without it stdin is /dev/null. */
  input?: string | undefined;
  /** The client's own stdin instead (sudo asking for a password; needs `sameGroup`). */
  inheritStdin?: boolean | undefined;
  /**
   * The child stays in the client's process group, a terminal's foreground one: it can read the
   * terminal and a Ctrl-C reaches it too. `group` kills then reach the child alone.
   */
  sameGroup?: boolean | undefined;
  /** Milliseconds from the start after which the program is killed; null: no deadline. */
  timeoutMs: number | null;
  kill?: { mode: 'group'; graceMs: number } | { mode: 'tree' } | undefined;
  /** Bytes kept per stream (the head); the rest is counted, not kept. Default 4 MiB. */
  maxOutputBytes?: number | undefined;
  /** Keep the last this many bytes of stderr instead of its head: a long run's end says why it ended. */
  stderrTail?: number | undefined;
  /** Called once the child runs, with its pid. */
  onStart?: ((pid: number) => void) | undefined;
  /** Cuts the run short as its deadline would (timedOut is then true as well). */
  abort?: AbortSignal | undefined;
  /** Every stdout chunk as it arrives (also kept, up to the limit). */
  onStdout?: ((chunk: Buffer) => void) | undefined;
  /** Every stderr chunk as it arrives (also kept, up to the limit). */
  onStderr?: ((chunk: Buffer) => void) | undefined;
}

export interface RunResult {
  /** null when killed by a signal or never started. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Why the program did not start (not found, not executable). */
  error: Error | null;
  durationMs: number;
}

const DEFAULT_MAX_OUTPUT = 4 * 1024 * 1024;
/** After the child exits, output still in flight gets this long before our ends of the pipes close. */
const PIPE_GRACE_MS = 1000;

function collector(limit: number) {
  const chunks: Buffer[] = [];
  let size = 0;
  return {
    add(chunk: Buffer) {
      if (size < limit) chunks.push(chunk.subarray(0, limit - size));
      size += chunk.length;
    },
    text: () => Buffer.concat(chunks).toString('utf8'),
  };
}

function tailCollector(limit: number) {
  const chunks: Buffer[] = [];
  let size = 0;
  return {
    add(chunk: Buffer) {
      chunks.push(chunk);
      size += chunk.length;
      while (chunks.length > 1 && size - (chunks[0] as Buffer).length >= limit)
        size -= (chunks.shift() as Buffer).length;
    },
    text: () => {
      const all = Buffer.concat(chunks);
      return all.subarray(Math.max(0, all.length - limit)).toString('utf8');
    },
  };
}

/** Signals a process group (its leader's pid negated); with `group` false the process alone. */
export function signalGroup(pid: number | undefined, signal: NodeJS.Signals, group = true): void {
  if (pid === undefined) return;
  try {
    process.kill(group ? -pid : pid, signal);
  } catch {
    // Already gone.
  }
}

export function runWithDeadline(argv: readonly string[], opts: RunOptions): Promise<RunResult> {
  const [file, ...args] = argv;
  if (file === undefined) throw new Error('runWithDeadline needs a program');
  const kill = opts.kill ?? { mode: 'group', graceMs: 0 };
  const limit = opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  const started = performance.now();
  return new Promise((resolve) => {
    const out = collector(limit);
    const err = opts.stderrTail === undefined ? collector(limit) : tailCollector(opts.stderrTail);
    const detached = opts.sameGroup !== true;
    const child = spawn(file, args, {
      env: opts.env ?? process.env,
      cwd: opts.cwd,
      shell: false,
      detached,
      stdio: [opts.inheritStdin === true ? 'inherit' : opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    const pid = child.pid;
    if (pid !== undefined) opts.onStart?.(pid);
    child.stdout!.on('data', (c: Buffer) => {
      out.add(c);
      opts.onStdout?.(c);
    });
    child.stderr!.on('data', (c: Buffer) => {
      err.add(c);
      opts.onStderr?.(c);
    });
    if (opts.input !== undefined && child.stdin !== null) {
      // A program that exits without reading its input must not fail the run with EPIPE.
      child.stdin.on('error', () => {});
      child.stdin.end(opts.input);
    }

    let timedOut = false;
    let killed: KilledProcess[] = [];
    let graceTimer: NodeJS.Timeout | undefined;
    const cut = () => {
      if (timedOut) return;
      timedOut = true;
      if (pid === undefined) return;
      if (kill.mode === 'tree') {
        killed = killTree(pid);
        return;
      }
      signalGroup(pid, kill.graceMs > 0 ? 'SIGTERM' : 'SIGKILL', detached);
      if (kill.graceMs > 0) graceTimer = setTimeout(() => signalGroup(pid, 'SIGKILL', detached), kill.graceMs);
    };
    const deadline = opts.timeoutMs === null ? undefined : setTimeout(cut, opts.timeoutMs);
    opts.abort?.addEventListener('abort', cut, { once: true });
    const onClientExit = () => signalGroup(pid, 'SIGKILL', detached);
    process.once('exit', onClientExit);

    let error: Error | null = null;
    child.on('error', (e) => {
      error = e;
    });
    // A descendant that left the group (double fork) may hold the pipes open after the child is
    // gone: output still in flight gets a moment, then the pipes are closed on our side.
    child.on('exit', () => {
      setTimeout(() => {
        child.stdout!.destroy();
        child.stderr!.destroy();
      }, PIPE_GRACE_MS).unref();
    });
    child.on('close', (code, signal) => {
      clearTimeout(deadline);
      clearTimeout(graceTimer);
      opts.abort?.removeEventListener('abort', cut);
      process.off('exit', onClientExit);
      const result = (): RunResult => ({
        exitCode: error === null ? code : null,
        signal,
        stdout: out.text(),
        stderr: err.text(),
        timedOut,
        error,
        durationMs: Math.round(performance.now() - started),
      });
      // A tree-killed run is reported only once nothing of its tree is left.
      void untilGone(killed).then(() => resolve(result()));
    });
  });
}
