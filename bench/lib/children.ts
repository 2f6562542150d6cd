import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { onCleanup } from './cleanup.ts';

export interface NodeChild {
  name: string;
  pid: number;
  process: ChildProcess;
  /** Resolves with the exit code (or signal name) once the process is gone. */
  exited: Promise<number | string>;
  /** True once the process has exited. */
  hasExited(): boolean;
  /** The last lines the child wrote to stdout/stderr, for error messages. */
  outputTail(): string;
  /** SIGTERM, then SIGKILL after `graceMs`. Resolves when the process is gone. Idempotent. */
  stop(graceMs?: number): Promise<void>;
}

export interface SpawnOptions {
  name: string;
  /** Complete environment for the child (nothing is inherited implicitly). */
  env: NodeJS.ProcessEnv;
  cwd?: string;
  args?: string[];
  /** Options for node itself, before the script (e.g. --cpu-prof). */
  nodeArgs?: string[];
  /** Echo the child's output to our stderr as it comes (BENCH_VERBOSE=1). */
  echo?: boolean;
  /** How many output lines to keep for error messages. */
  keepLines?: number;
  /**
   * Write the child's output to this file instead of a pipe to us: a verbose child's lines then
   * cost it a write, not this process (the load generator) the reading.
   */
  outputFile?: string;
}

/** The last `keep` lines of a file, for error messages. */
function fileTail(file: string, keep: number): string {
  try {
    return fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .slice(-keep - 1)
      .join('\n');
  } catch {
    return '';
  }
}

/**
 * Run `script` with this very Node binary (process.execPath) as a separate process, so
 * it does not share the load generator's event loop. The child is stopped by the
 * benchmark's cleanup if the caller does not stop it first.
 */
export function spawnNode(script: string, opts: SpawnOptions): NodeChild {
  const fd = opts.outputFile === undefined ? null : fs.openSync(opts.outputFile, 'a');
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), script, ...(opts.args ?? [])], {
    cwd: opts.cwd,
    env: opts.env,
    stdio: fd === null ? ['ignore', 'pipe', 'pipe'] : ['ignore', fd, fd],
  });
  if (fd !== null) fs.closeSync(fd);
  if (child.pid === undefined) throw new Error(`${opts.name}: could not spawn ${process.execPath} ${script}`);
  const pid = child.pid;
  const keep = opts.keepLines ?? 60;
  const lines: string[] = [];
  const collect = (stream: NodeJS.ReadableStream | null, tag: string): void => {
    if (!stream) return;
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(`${tag} ${line}`);
        if (lines.length > keep) lines.shift();
        if (opts.echo) process.stderr.write(`[${opts.name}${tag === 'err' ? ' stderr' : ''}] ${line}\n`);
      }
    });
  };
  collect(child.stdout, 'out');
  collect(child.stderr, 'err');

  let exitedFlag = false;
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => {
      exitedFlag = true;
      resolve(code ?? signal ?? 'unknown');
    });
    child.once('error', (err) => {
      lines.push(`spawn error: ${err.message}`);
    });
  });

  let stopping: Promise<void> | null = null;
  const stop = (graceMs = 20_000): Promise<void> =>
    (stopping ??= (async () => {
      if (exitedFlag) return;
      child.kill('SIGTERM');
      const timer = sleep(graceMs, 'timeout' as const);
      const outcome = await Promise.race([exited, timer]);
      if (outcome === 'timeout' && !exitedFlag) {
        console.error(`${opts.name} (pid ${pid}) did not exit within ${graceMs} ms of SIGTERM; sending SIGKILL`);
        child.kill('SIGKILL');
        await exited;
      }
    })());

  const unregister = onCleanup(
    `stop ${opts.name}`,
    () => stop(),
    () => {
      if (!exitedFlag) child.kill('SIGKILL');
    },
  );
  void exited.then(() => {
    // Keep the step registered until stop() finished, so the exit handler still knows.
    if (stopping === null) unregister();
    else void stopping.then(unregister);
  });

  return {
    name: opts.name,
    pid,
    process: child,
    exited,
    hasExited: () => exitedFlag,
    outputTail: () => (opts.outputFile === undefined ? lines.join('\n') : fileTail(opts.outputFile, keep)),
    stop,
  };
}

export interface WaitOptions {
  timeoutMs: number;
  /** Give up at once if this child exits while we wait. */
  child?: NodeChild;
  signal?: AbortSignal;
  intervalMs?: number;
  headers?: Record<string, string>;
}

/** Poll `url` with GET until it answers 200, the child exits, or the time is up. */
export async function waitForHttp(url: string, opts: WaitOptions): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  let lastError = 'no answer yet';
  while (Date.now() < deadline) {
    opts.signal?.throwIfAborted();
    if (opts.child?.hasExited()) {
      throw new Error(
        `${opts.child.name} exited (${await opts.child.exited}) before ${url} answered. Its last output:\n${opts.child.outputTail()}`,
      );
    }
    try {
      const res = await fetch(url, {
        ...(opts.headers === undefined ? {} : { headers: opts.headers }),
        signal: AbortSignal.timeout(2_000),
      });
      await res.arrayBuffer();
      if (res.status === 200) return;
      lastError = `HTTP ${res.status}`;
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
    }
    await sleep(opts.intervalMs ?? 200);
  }
  const tail = opts.child ? `\nLast output of ${opts.child.name}:\n${opts.child.outputTail()}` : '';
  throw new Error(`${url} did not answer 200 within ${opts.timeoutMs} ms (${lastError})${tail}`);
}

/**
 * Runs a system tool (psql, pgbench) to its end, killed if the bench is interrupted. Resolves with
 * its exit code (null when it could not start or died of a signal) and its stdout and stderr together.
 */
export async function runTool(
  command: string,
  args: readonly string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<{ code: number | null; out: string }> {
  const child = spawn(command, args, { env: opts.env, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const unregister = onCleanup(
    `stop ${command}`,
    () => void child.kill('SIGKILL'),
    () => void child.kill('SIGKILL'),
  );
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (out += c));
  const code = await new Promise<number | null>((resolve) => {
    child.once('error', (err) => {
      out += err.message;
      resolve(null);
    });
    child.once('exit', (c) => resolve(c));
  });
  unregister();
  return { code, out };
}
