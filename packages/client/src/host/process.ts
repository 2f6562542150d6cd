import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Finding and running host programs. Every lookup goes through the PATH of the environment
 * the command was given (CliContext.env), never process.env, so that what the checks see is
 * what the user's shell (or a test) would see.
 */

/** The directories of a PATH value, in order; empty entries (meaning the current directory) are skipped. */
export function pathDirs(env: NodeJS.ProcessEnv): string[] {
  return (env['PATH'] ?? '').split(path.delimiter).filter((d) => d !== '');
}

/** The first executable regular file called `name` on the PATH of `env`, or null. */
export function findExecutable(name: string, env: NodeJS.ProcessEnv): string | null {
  if (name.includes('/')) return isExecutableFile(name) ? name : null;
  for (const dir of pathDirs(env)) {
    const candidate = path.join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}

function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

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
