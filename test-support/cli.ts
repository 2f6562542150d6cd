import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { testTempDir } from './temp-dirs.ts';

/** The repository root (tools/ and packages/ live here). */
export const REPO = path.resolve(import.meta.dirname, '..');
export const SVC = path.join(REPO, 'packages/client/bin/svc');
export const tool = (name: string) => path.join(REPO, 'tools', name);

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Added to a minimal environment (PATH, HOME, LANG, NODE_COMPILE_CACHE); `undefined` removes a variable. */
  env?: Record<string, string | undefined>;
  /** HOME of the run (~/.svc lives there); a fresh temp dir when omitted. */
  home?: string;
  /** Text on standard input; otherwise stdin is /dev/null (not a terminal). */
  input?: string;
  cwd?: string;
  timeoutMs?: number;
}

/**
 * Node's compile cache, shared by every process the tests start: the CLI runs its TypeScript
 * sources directly, and a cached boot takes about a third less time. It changes no output.
 */
export const NODE_COMPILE_CACHE = path.join(os.tmpdir(), 'svc-test-node-compile-cache');

/** A fresh, empty HOME directory, removed when the test file ends (temp-dirs.ts). */
export async function tempHome(): Promise<string> {
  return testTempDir('svc-home-');
}

/**
 * A fresh HOME for the file's tests (made before them, removed after), and `file(name, text)`
 * that writes a file into it and resolves with its path.
 */
export function useTempHome(): { dir: () => string; file: (name: string, text: string) => Promise<string> } {
  let dir = '';
  beforeAll(async () => {
    dir = await tempHome();
  });
  afterAll(async () => {
    if (dir !== '') await fs.rm(dir, { recursive: true, force: true });
  });
  return {
    dir: () => dir,
    async file(name, text) {
      const p = path.join(dir, name);
      await fs.writeFile(p, text);
      return p;
    },
  };
}

/**
 * Run `svc` or a tools/ script as a real process, the way a user's shell would: a minimal
 * environment (nothing of the test runner's, so no stray CI or NO_COLOR), its own HOME,
 * stdout and stderr captured (pipes, so not a terminal). Resolves with the exit code.
 */
export async function runCli(executable: string, args: string[], opts: RunOptions = {}): Promise<CliResult> {
  const ownHome = opts.home === undefined ? await tempHome() : null;
  const home = opts.home ?? (ownHome as string);
  const env: Record<string, string> = {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: home,
    LANG: 'C.UTF-8',
    NODE_COMPILE_CACHE,
  };
  for (const [k, v] of Object.entries(opts.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return new Promise((resolve, reject) => {
    const child = spawn(executable, args, {
      env,
      cwd: opts.cwd ?? REPO,
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `${path.basename(executable)} ${args.join(' ')} did not finish within ${opts.timeoutMs ?? 60_000} ms\nstdout: ${stdout}\nstderr: ${stderr}`,
        ),
      );
    }, opts.timeoutMs ?? 60_000);
    if (opts.input !== undefined) child.stdin?.end(opts.input);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      // A HOME this helper made is removed; one the caller passed is the caller's.
      const cleanup = ownHome === null ? Promise.resolve() : fs.rm(ownHome, { recursive: true, force: true });
      void cleanup.then(() => resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr }));
    });
  });
}

/** Write a KEY=VALUE config file and return its path. */
export async function writeConfig(dir: string, values: Record<string, string>, name = 'svc.conf'): Promise<string> {
  const file = path.join(dir, name);
  await fs.writeFile(
    file,
    Object.entries(values)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n') + '\n',
  );
  return file;
}
