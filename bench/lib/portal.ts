import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { CreateLicenseBody } from '@svc/protocol';
import { spawnNode, waitForHttp, type NodeChild } from './children.ts';
import { interrupted, onCleanup } from './cleanup.ts';
import { freePort } from '@svc/test-support/ports';
import { processAlive } from '@svc/protocol/node';

/** The repository root (bench/lib/../..). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface PortalProcess {
  /** e.g. http://127.0.0.1:40123 */
  url: string;
  port: number;
  pgPort: number;
  /** Fresh temp dir holding the embedded PostgreSQL cluster; removed by cleanup. */
  dataDir: string;
  adminEmail: string;
  adminPassword: string;
  child: NodeChild;
  /** The embedded PostgreSQL postmaster, once it runs. */
  postmasterPid(): number | null;
  /** SIGTERM (the portal drains and stops PostgreSQL), then make sure PostgreSQL is gone. */
  stop(): Promise<void>;
}

export interface PortalOptions {
  /** Echo the portal's log to stderr. */
  echo?: boolean;
  logLevel?: string;
  /** Extra environment for the portal (e.g. SVC_DB_POOL_MAX). */
  env?: Record<string, string>;
  startTimeoutMs?: number;
  /** Options for node itself (e.g. ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] to profile the portal). */
  nodeArgs?: string[];
  /** Write the portal's log to `portal.log` in its data dir instead of a pipe to the benchmark. */
  logToFile?: boolean;
}

function readPostmasterPid(dataDir: string): number | null {
  try {
    const first = fs.readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0] ?? '';
    const pid = Number(first.trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/**
 * If the portal could not stop its embedded PostgreSQL (it was killed, or crashed), stop
 * the postmaster ourselves: SIGINT is PostgreSQL's "fast shutdown", SIGKILL the last resort.
 */
async function stopOrphanedPostgres(dataDir: string): Promise<void> {
  const pid = readPostmasterPid(dataDir);
  if (pid === null || !processAlive(pid)) return;
  console.error(`embedded PostgreSQL (pid ${pid}) still running after the portal stopped; shutting it down`);
  process.kill(pid, 'SIGINT');
  for (let i = 0; i < 150 && processAlive(pid); i++) await sleep(200);
  if (processAlive(pid)) process.kill(pid, 'SIGKILL');
}

/** The environment we were started with, minus anything that would point the portal elsewhere. */
function portalBaseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('SVC_') || k === 'DATABASE_URL' || k === 'PORT' || k === 'HOST' || k.startsWith('npm_')) continue;
    env[k] = v;
  }
  return env;
}

/**
 * Start the real portal (packages/portal/src/main.ts) as a separate process on free ports,
 * with a fresh embedded PostgreSQL in a temp dir and a bootstrap admin, and wait for
 * /api/health. Everything it starts is undone by the benchmark's cleanup.
 */
export async function startPortalProcess(opts: PortalOptions = {}): Promise<PortalProcess> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'));
  // The embedded PostgreSQL runs as the postgres user when we are root: it must reach its cluster below.
  fs.chmodSync(dataDir, 0o755);
  onCleanup(
    `remove ${dataDir}`,
    () => fs.promises.rm(dataDir, { recursive: true, force: true }),
    () => fs.rmSync(dataDir, { recursive: true, force: true }),
  );
  onCleanup(
    'stop embedded PostgreSQL',
    () => stopOrphanedPostgres(dataDir),
    () => {
      const pid = readPostmasterPid(dataDir);
      if (pid !== null && processAlive(pid)) process.kill(pid, 'SIGQUIT');
    },
  );

  const host = '127.0.0.1';
  const port = await freePort(host);
  const pgPort = await freePort(host);
  const adminEmail = 'bench-admin@bench.invalid';
  const adminPassword = randomBytes(18).toString('base64url');
  const env: NodeJS.ProcessEnv = {
    ...portalBaseEnv(),
    PORT: String(port),
    HOST: host,
    SVC_DATA_DIR: dataDir,
    SVC_EMBEDDED_PG_PORT: String(pgPort),
    SVC_LOG_LEVEL: opts.logLevel ?? 'warn',
    SVC_ADMIN_EMAIL: adminEmail,
    SVC_ADMIN_PASSWORD: adminPassword,
    // Every benchmark client is one address (loopback): the per-address limit would be the ceiling.
    SVC_MAX_CONNECTIONS_PER_ADDRESS: '1000',
    ...opts.env,
  };
  const main = path.join(REPO_ROOT, 'packages', 'portal', 'src', 'main.ts');
  const child = spawnNode(main, {
    name: 'portal',
    env,
    cwd: REPO_ROOT,
    echo: opts.echo ?? false,
    nodeArgs: opts.nodeArgs ?? [],
    ...(opts.logToFile ? { outputFile: path.join(dataDir, 'portal.log') } : {}),
  });
  const url = `http://${host}:${port}`;
  await waitForHttp(`${url}/api/health`, { timeoutMs: opts.startTimeoutMs ?? 180_000, child, signal: interrupted });

  return {
    url,
    port,
    pgPort,
    dataDir,
    adminEmail,
    adminPassword,
    child,
    postmasterPid: () => readPostmasterPid(dataDir),
    async stop() {
      await child.stop(30_000);
      await stopOrphanedPostgres(dataDir);
    },
  };
}

async function answerOf(res: Response, what: string): Promise<unknown> {
  const text = await res.text();
  if (!res.ok) throw new Error(`${what}: HTTP ${res.status} ${text.slice(0, 500)}`);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(`${what}: not JSON: ${text.slice(0, 200)}`);
  }
}

/** POST /identity/token with the password grant; returns the access token. */
export async function adminToken(portal: Pick<PortalProcess, 'url' | 'adminEmail' | 'adminPassword'>): Promise<string> {
  const res = await fetch(`${portal.url}/identity/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'password',
      username: portal.adminEmail,
      password: portal.adminPassword,
    }).toString(),
    signal: AbortSignal.timeout(30_000),
  });
  const body = (await answerOf(res, 'POST /identity/token')) as { access_token?: unknown };
  if (typeof body.access_token !== 'string') throw new Error('POST /identity/token: no access_token in the answer');
  return body.access_token;
}

/** POST /api/licenses as an admin; returns the plaintext key (shown only in this answer). */
export async function createLicense(
  portal: Pick<PortalProcess, 'url'>,
  token: string,
  license: CreateLicenseBody,
): Promise<string> {
  const res = await fetch(`${portal.url}/api/licenses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-identity-token': token },
    body: JSON.stringify(license),
    signal: AbortSignal.timeout(30_000),
  });
  const body = (await answerOf(res, 'POST /api/licenses')) as { license?: { plaintext_key?: unknown } };
  const key = body.license?.plaintext_key;
  if (typeof key !== 'string') throw new Error('POST /api/licenses: no license.plaintext_key in the answer');
  return key;
}
