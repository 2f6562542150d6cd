import { runWithDeadline } from '../../kit/process/run.ts';
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

/**
 * Runs one tool with a fixed argv and no shell, in its own process group so that a timeout kills
 * everything it started (SIGTERM, then SIGKILL after 3 s). Output past 4 MiB per stream is dropped
 * (the head is kept). Never throws for a non-zero exit: tools such as testssl.sh use exit codes
 * for findings; a tool that cannot start is an error.
 */
export async function runTool(opts: RunToolOptions): Promise<ToolOutput> {
  const r = await runWithDeadline([...(opts.wrapper ?? []), opts.path, ...opts.args], {
    env: opts.env ?? process.env,
    cwd: opts.cwd,
    timeoutMs: opts.timeoutMs,
    kill: { mode: 'group', graceMs: KILL_GRACE_MS },
    maxOutputBytes: OUTPUT_LIMIT,
  });
  if (r.error !== null) throw r.error;
  return { stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode, timedOut: r.timedOut, durationMs: r.durationMs };
}
