import { spawn } from 'node:child_process';
import os from 'node:os';
import { type KilledProcess, killTree, startTimeOf, untilGone } from '../../process/kill-tree.ts';

/**
 * Runs one program (argv, never shell text) under a deadline. The child leads its own process
 * group; past the deadline its whole tree is killed and the run ends with exit code 124.
 */

export const EXIT_TIMEOUT = 124;
/** The program could not be started (not found, not executable). */
export const EXIT_NOT_STARTED = 127;
/** Raw output kept per stream before the report's 10 KB cap (the report keeps the head). */
const KEEP_BYTES = 64 * 1024;
const PIPE_GRACE_MS = 1000;

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

function collector() {
  const chunks: Buffer[] = [];
  let size = 0;
  return {
    add(chunk: Buffer) {
      if (size >= KEEP_BYTES) return;
      chunks.push(chunk.subarray(0, KEEP_BYTES - size));
      size += chunk.length;
    },
    text: () => Buffer.concat(chunks).toString('utf8'),
  };
}

export function runProcess(argv: readonly string[], opts: RunOptions): Promise<ProcessRun> {
  const [file, ...args] = argv;
  if (file === undefined) throw new Error('runProcess needs a program');
  return new Promise((resolve) => {
    const out = collector();
    const err = collector();
    let killed: KilledProcess[] | null = null;
    const child = spawn(file, args, {
      env: opts.env,
      cwd: opts.cwd,
      shell: false,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const pid = child.pid;
    if (pid !== undefined) {
      const startTime = startTimeOf(pid);
      if (startTime !== null) opts.onStart?.({ pid, startTime });
    }
    child.stdout.on('data', (c: Buffer) => out.add(c));
    child.stderr.on('data', (c: Buffer) => err.add(c));
    const timer = setTimeout(
      () => {
        killed = pid === undefined ? [] : killTree(pid);
      },
      Math.max(0, opts.deadline - Date.now()),
    );
    let spawnError: Error | null = null;
    child.on('error', (e) => {
      spawnError = e;
    });
    // A descendant that left the tree (double fork) may hold the pipes open after the child is
    // gone: output still in flight gets a moment, then the pipes are closed on our side.
    child.on('exit', () => {
      setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, PIPE_GRACE_MS).unref();
    });
    child.on('close', (code, sig) => {
      clearTimeout(timer);
      const stderr = spawnError ? `${err.text()}cannot start ${file}: ${spawnError.message}\n` : err.text();
      const timedOut = killed !== null;
      const exitCode = timedOut ? EXIT_TIMEOUT : spawnError ? EXIT_NOT_STARTED : (code ?? 128 + signalNumber(sig));
      // A timed-out run is reported only once nothing of its tree is left.
      void untilGone(killed ?? []).then(() => resolve({ exitCode, stdout: out.text(), stderr, timedOut }));
    });
  });
}

function signalNumber(sig: NodeJS.Signals | null): number {
  return sig === null ? 0 : (os.constants.signals[sig] ?? 0);
}
