import { spawn } from 'node:child_process';

/** Running host programs; finding them is process/find-program.ts. */

export interface ProgramResult {
  /** Exit code; null when killed (timeout) or when the program could not be started. */
  code: number | null;
  stdout: string;
  stderr: string;
  /** Why there is no exit code: a spawn error or the timeout. */
  error?: string;
}

/**
 * Runs a program with captured output (no shell), `input` on its stdin, killed after
 * `timeoutMs`. Never throws.
 */
export function runProgram(
  file: string,
  args: string[],
  opts: { env: NodeJS.ProcessEnv; input?: string; timeoutMs?: number },
): Promise<ProgramResult> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    let settled = false;
    const finish = (r: ProgramResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const child = spawn(file, args, {
      env: opts.env,
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    const timeoutMs = opts.timeoutMs ?? 10_000;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish({ code: null, stdout, stderr, error: `did not finish within ${timeoutMs / 1000} s` });
    }, timeoutMs);
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', (err) => finish({ code: null, stdout, stderr, error: err.message }));
    child.on('close', (code) => finish({ code, stdout, stderr }));
    if (opts.input !== undefined) {
      child.stdin!.on('error', () => {});
      child.stdin!.end(opts.input);
    }
  });
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
