import { spawn } from 'node:child_process';
import type { ToolOutput } from './types.ts';

const OUTPUT_LIMIT = 4 * 1024 * 1024;
const KILL_GRACE_MS = 3_000;

export interface RunToolOptions {
  /** Absolute path of the tool's binary. */
  path: string;
  args: readonly string[];
  timeoutMs: number;
  /** A fixed command the tool runs under (the test network's `ip netns exec <ns>`); from code only. */
  wrapper?: readonly string[] | undefined;
  env?: NodeJS.ProcessEnv | undefined;
  cwd?: string | undefined;
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

/**
 * Runs one tool with a fixed argv and no shell, in its own process group so that a timeout kills
 * everything it started. Output past 4 MiB per stream is dropped (the head is kept). Never throws
 * for a non-zero exit: tools such as testssl.sh use exit codes for findings.
 */
export async function runTool(opts: RunToolOptions): Promise<ToolOutput> {
  const [file, ...argv] = [...(opts.wrapper ?? []), opts.path, ...opts.args];
  const started = performance.now();
  const child = spawn(file as string, argv, {
    shell: false,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: opts.env ?? process.env,
    cwd: opts.cwd,
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let outLen = 0;
  let errLen = 0;
  child.stdout.on('data', (c: Buffer) => {
    if (outLen < OUTPUT_LIMIT) out.push(c);
    outLen += c.length;
  });
  child.stderr.on('data', (c: Buffer) => {
    if (errLen < OUTPUT_LIMIT) err.push(c);
    errLen += c.length;
  });
  let timedOut = false;
  let killTimer: NodeJS.Timeout | undefined;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child.pid, 'SIGTERM');
    killTimer = setTimeout(() => killGroup(child.pid, 'SIGKILL'), KILL_GRACE_MS);
  }, opts.timeoutMs);
  const onExit = () => killGroup(child.pid, 'SIGKILL');
  process.once('exit', onExit);
  const exitCode = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code));
  }).finally(() => {
    clearTimeout(timer);
    clearTimeout(killTimer);
    process.off('exit', onExit);
  });
  return {
    stdout: Buffer.concat(out).toString('utf8'),
    stderr: Buffer.concat(err).toString('utf8'),
    exitCode,
    timedOut,
    durationMs: Math.round(performance.now() - started),
  };
}
