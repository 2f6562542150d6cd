import { runWithDeadline } from '../kit/process/run.ts';

/** Running host programs; finding them is kit/process/find-program.ts. */

export interface ProgramResult {
  /** Exit code; null when killed (timeout) or when the program could not be started. */
  code: number | null;
  stdout: string;
  stderr: string;
  /** Why there is no exit code: a spawn error or the timeout. */
  error?: string;
}

/**
 * Runs a program with captured output (no shell), `input` on its stdin, its process group
 * killed after `timeoutMs`. Never throws.
 */
export async function runProgram(
  file: string,
  args: string[],
  opts: { env: NodeJS.ProcessEnv; input?: string; timeoutMs?: number },
): Promise<ProgramResult> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const r = await runWithDeadline([file, ...args], { env: opts.env, input: opts.input, timeoutMs });
  const base = { stdout: r.stdout, stderr: r.stderr };
  if (r.error !== null) return { code: null, ...base, error: r.error.message };
  if (r.timedOut) return { code: null, ...base, error: `did not finish within ${timeoutMs / 1000} s` };
  return { code: r.exitCode, ...base };
}

/** Whether the current process runs as root (false where there are no user ids, e.g. Windows). */
export function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/**
 * Whether the run is under CI: CI set to anything but "", "0" or "false" (GitHub Actions,
 * GitLab, Jenkins and most others set CI=true). Such runs never prompt.
 */
export function isCI(env: NodeJS.ProcessEnv): boolean {
  const v = env['CI'];
  return v !== undefined && !['', '0', 'false'].includes(v.trim().toLowerCase());
}
