import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../src/db/migrations/index.ts';
import { freePort } from '@svc/test-support/ports';
import { http as request, withToken } from '@svc/test-support/http';
import { login } from '@svc/test-support/portal';
import {
  allOutput,
  clusterDir,
  isAlive,
  killAll,
  killProcess,
  makeDataDir,
  pgCtlStatus,
  postgresProcessesFor,
  readPostmasterPid,
  sleep,
  spawnPortal,
  startPortalProcess,
  stopProcess,
  waitForDeath,
  waitForExit,
  type PortalProcess,
} from '@svc/test-support/portal-process';

/**
 * The real `node packages/portal/src/main.ts` in embedded mode (DATABASE_URL unset),
 * one data dir for the whole file: the tests run in order and each one builds on the
 * cluster and data the previous ones left (first start, restart, drain, kill -9 ...).
 */

const ADMIN_EMAIL = 'lifecycle-admin@test.local';
const ADMIN_PASSWORD = 'lifecycle-password-0123';

let dataDir: string;
let pgPort: number;
let current: PortalProcess | null = null;
/** Licenses created through the API, by id, in creation order. */
const created: string[] = [];
/** Every access token the tests obtained (checked against the processes' output at the end). */
const tokens: string[] = [];

async function adminToken(p: PortalProcess): Promise<string> {
  const token = await login(p.url, ADMIN_EMAIL, ADMIN_PASSWORD);
  tokens.push(token);
  return token;
}

function portalEnv(extra: Record<string, string> = {}) {
  return {
    dataDir,
    pgPort,
    // Debug: each request is logged as it arrives ("request received"), which tells these tests
    // that the portal has a request in flight (the access line comes only once it is answered).
    env: { SVC_ADMIN_EMAIL: ADMIN_EMAIL, SVC_ADMIN_PASSWORD: ADMIN_PASSWORD, SVC_LOG_LEVEL: 'debug', ...extra },
  };
}

function start(extra: Record<string, string> = {}): Promise<PortalProcess> {
  return startPortalProcess(portalEnv(extra));
}

/** A request's first line (debug): the portal has its headers and has routed it. */
const requestLine = (method: string, url: string) =>
  `"req":\\{"method":"${method}","url":"${url}"[^\\n]*"msg":"request received"`;

/** Matches once the portal has logged at least `n` requests `method url` (anchored: no backtracking blow-up). */
function requestsLogged(method: string, url: string, n: number): RegExp {
  return new RegExp(`^(?:[\\s\\S]*?${requestLine(method, url)}){${n}}`);
}

function countRequests(p: PortalProcess, method: string, url: string): number {
  return (p.stdout().match(new RegExp(requestLine(method, url), 'g')) ?? []).length;
}

async function createLicense(p: PortalProcess, name: string): Promise<string> {
  const token = await adminToken(p);
  const res = await request(p.url, 'POST', '/api/licenses', {
    headers: withToken(token),
    json: { tier: 'business', client_id: 'lifecycle-client', name },
  });
  expect(res.status).toBe(201);
  expect(res.body.license.name).toBe(name);
  created.push(res.body.license.id as string);
  return res.body.license.id as string;
}

async function listedLicenseIds(p: PortalProcess): Promise<string[]> {
  const token = await adminToken(p);
  const res = await request(p.url, 'GET', '/api/licenses?client_id=lifecycle-client', { headers: withToken(token) });
  expect(res.status).toBe(200);
  return (res.body.licenses as { id: string }[]).map((l) => l.id).sort();
}

async function withDatabase<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const { password } = JSON.parse(await fs.readFile(path.join(dataDir, 'postgres-credentials.json'), 'utf8')) as {
    password: string;
  };
  const client = new pg.Client({ connectionString: `postgres://postgres:${password}@127.0.0.1:${pgPort}/svc` });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** After a clean stop: no pid file, no process in the cluster dir, pg_ctl agrees. */
async function expectPostgresStopped(): Promise<void> {
  expect(await readPostmasterPid(dataDir)).toBeNull();
  expect(await postgresProcessesFor(dataDir)).toEqual([]);
  const status = await pgCtlStatus(dataDir);
  expect(status.code).toBe(3);
  expect(status.out).toMatch(/no server running/);
}

/** Try a fresh TCP connection: 'refused' or 'connected'. */
function tryConnect(port: number): Promise<'refused' | 'connected' | string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.setTimeout(2_000);
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve('timeout');
    });
    socket.once('error', (err: NodeJS.ErrnoException) =>
      resolve(err.code === 'ECONNREFUSED' ? 'refused' : (err.code ?? err.message)),
    );
  });
}

beforeAll(async () => {
  dataDir = await makeDataDir('svc-lifecycle-');
  pgPort = await freePort();
});

afterAll(async () => {
  // Every portal and every PostgreSQL process in the data dir, also orphans; then the dir.
  await killAll();
});

describe('portal process lifecycle, embedded PostgreSQL', () => {
  it('first start initialises the cluster under SVC_DATA_DIR and serves /api/health', async () => {
    // What an initdb interrupted by a crash leaves behind: it is discarded, not used.
    await fs.mkdir(`${clusterDir(dataDir)}.init`);
    await fs.writeFile(`${clusterDir(dataDir)}.init/PG_VERSION`, 'half-done');
    current = await start();
    expect(current.stdout()).toContain('initialising embedded PostgreSQL cluster');
    expect(current.stdout()).toContain('embedded PostgreSQL started');
    expect(current.stdout()).toContain('"database":"embedded"');

    const version = (await fs.readFile(path.join(clusterDir(dataDir), 'PG_VERSION'), 'utf8')).trim();
    expect(version).toBe('17');
    // The half-initialised scratch dir is gone; the credentials are private to the portal's user.
    await expect(fs.access(`${clusterDir(dataDir)}.init`)).rejects.toThrow();
    const secrets = await fs.stat(path.join(dataDir, 'postgres-credentials.json'));
    expect(secrets.mode & 0o777).toBe(0o600);

    // The server runs from the cluster under the data dir, on the configured port only.
    const pid = await readPostmasterPid(dataDir);
    expect(pid).not.toBeNull();
    expect(isAlive(pid!)).toBe(true);
    expect(await postgresProcessesFor(dataDir)).toContain(pid);
    const pidFile = (await fs.readFile(path.join(clusterDir(dataDir), 'postmaster.pid'), 'utf8')).split('\n');
    expect(pidFile[1]).toBe(await fs.realpath(clusterDir(dataDir)));
    expect(pidFile[3]).toBe(String(pgPort));
    expect(pidFile[5]).toBe('127.0.0.1');

    const res = await request(current.url, 'GET', '/api/health');
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('ok');
    expect(res.body.environment).toBe('unknown');

    await createLicense(current, 'first start');
    expect(await listedLicenseIds(current)).toEqual([...created].sort());

    // The portal's secrets are not copied into the database server's environment.
    const environ = (await fs.readFile(`/proc/${pid}/environ`, 'utf8')).split('\0');
    expect(environ.join('\n')).not.toContain(ADMIN_PASSWORD);
    expect(environ.filter((v) => v.startsWith('SVC_'))).toEqual([]);
  });

  it('SIGTERM exits 0 and stops the embedded PostgreSQL cleanly', async () => {
    const p = current!;
    const pid = (await readPostmasterPid(dataDir))!;
    const exit = await stopProcess(p, 'SIGTERM');
    expect(exit).toEqual({ code: 0, signal: null });
    expect(p.stdout()).toContain('shutting down: draining requests');
    expect(p.stdout()).toContain('embedded PostgreSQL stopped');
    expect(p.stdout()).not.toContain('did not stop cleanly');
    // pg_ctl returned once the pid file was gone; the process itself ends a moment later.
    expect(await waitForDeath(pid, 10_000)).toBe(true);
    await expectPostgresStopped();
    // A clean shutdown leaves "shut down" in the control file: the next start needs no recovery.
    const log = await fs.readFile(path.join(dataDir, 'postgres-log', 'postgresql.log'), 'utf8');
    expect(log).toMatch(/database system is shut down\s*$/);
    current = null;
  });

  it('data survives a restart; the cluster is not initialised again and no migration runs twice', async () => {
    current = await start();
    expect(current.stdout()).not.toContain('initialising embedded PostgreSQL cluster');
    expect(current.stdout()).not.toContain('database migrations applied');
    expect(current.stdout()).not.toContain('still running');
    expect(await listedLicenseIds(current)).toEqual([...created].sort());
    await createLicense(current, 'after restart');
    expect(await listedLicenseIds(current)).toEqual([...created].sort());
    expect(created).toHaveLength(2);
  });

  it('SIGTERM drains an in-flight request: its slow body still gets a complete 201; new connections are refused', async () => {
    const p = current!;
    const token = await adminToken(p);
    const body = JSON.stringify({ tier: 'msp', client_id: 'lifecycle-client', name: 'created while draining' });
    const half = Math.floor(body.length / 2);
    const licensePosts = countRequests(p, 'POST', '/api/licenses');
    let pending: http.ClientRequest | null = null;

    const response = new Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }>(
      (resolve, reject) => {
        const req = http.request(
          `${p.url}/api/licenses`,
          {
            method: 'POST',
            agent: false,
            headers: {
              'content-type': 'application/json',
              'content-length': String(Buffer.byteLength(body)),
              'x-identity-token': token,
            },
          },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (c: string) => (text += c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.write(body.slice(0, half));
        pending = req;
      },
    );
    // Failure is asserted below by awaiting; keep an early rejection from being "unhandled".
    response.catch(() => undefined);
    // The server has received the headers and routed the request before the signal arrives.
    await p.waitForOutput(requestsLogged('POST', '/api/licenses', licensePosts + 1));

    p.child.kill('SIGTERM');
    await p.waitForOutput(/shutting down: draining requests/);

    // The listening socket closes at once; the in-flight request keeps its connection.
    let refused = false;
    for (let i = 0; i < 50 && !refused; i++) {
      refused = (await tryConnect(p.port)) === 'refused';
      if (!refused) await sleep(100);
    }
    expect(refused).toBe(true);
    expect(p.hasExited()).toBe(false);

    // Trickle the rest of the body.
    for (const ch of body.slice(half)) {
      pending!.write(ch);
      await sleep(5);
    }
    pending!.end();

    const res = await response;
    expect(res.status).toBe(201);
    const license = (
      JSON.parse(res.text) as { license: { id: string; name: string; tier: string; plaintext_key: string } }
    ).license;
    expect(license.name).toBe('created while draining');
    expect(license.tier).toBe('msp');
    expect(license.plaintext_key).toMatch(/^svc_msp_[0-9a-f]{64}$/);
    created.push(license.id);

    expect(await p.exited).toEqual({ code: 0, signal: null });
    await expectPostgresStopped();
    current = null;

    // The drained request was committed: it is there after the next start.
    current = await start();
    expect(await listedLicenseIds(current)).toEqual([...created].sort());
    expect(created).toHaveLength(3);
  });

  it('kill -9 of the portal orphans PostgreSQL; the next start stops the orphan and serves the old data', async () => {
    const p = current!;
    const orphan = (await readPostmasterPid(dataDir))!;
    await killProcess(p);
    expect(await p.exited).toEqual({ code: null, signal: 'SIGKILL' });
    current = null;
    // The postmaster was started in its own session: it outlives the portal.
    expect(isAlive(orphan)).toBe(true);
    expect((await pgCtlStatus(dataDir)).code).toBe(0);

    current = await start();
    expect(current.stdout()).toContain('embedded PostgreSQL from an earlier run is still running; stopping it first');
    expect(await waitForDeath(orphan, 10_000)).toBe(true);
    const fresh = await readPostmasterPid(dataDir);
    expect(fresh).not.toBeNull();
    expect(fresh).not.toBe(orphan);
    expect(await listedLicenseIds(current)).toEqual([...created].sort());
  });

  it('kill -9 of both the portal and the postmaster (stale postmaster.pid) also recovers', async () => {
    const p = current!;
    const postmaster = (await readPostmasterPid(dataDir))!;
    await killProcess(p);
    current = null;
    process.kill(postmaster, 'SIGKILL');
    expect(await waitForDeath(postmaster, 10_000)).toBe(true);
    // The pid file stays behind, naming a dead process.
    expect(await readPostmasterPid(dataDir)).toBe(postmaster);

    current = await start();
    const fresh = await readPostmasterPid(dataDir);
    expect(fresh).not.toBeNull();
    expect(fresh).not.toBe(postmaster);
    expect(isAlive(fresh!)).toBe(true);
    expect(await listedLicenseIds(current)).toEqual([...created].sort());
    // Still writable after crash recovery.
    await createLicense(current, 'after crash');
    expect(await listedLicenseIds(current)).toEqual([...created].sort());
    expect(created).toHaveLength(4);
  });

  it('a second portal on the same data dir refuses to start and leaves the running one alone', async () => {
    const first = current!;
    const postmaster = (await readPostmasterPid(dataDir))!;
    const second = await spawnPortal(portalEnv());
    const exit = await waitForExit(second, 60_000);
    expect(exit).toEqual({ code: 1, signal: null });
    expect(second.stderr()).toContain(
      `The portal failed to start: The data directory ${dataDir} is in use by another running portal`,
    );
    expect(second.stdout()).not.toContain('stopping it first');
    // The first portal's database was not touched.
    expect(await readPostmasterPid(dataDir)).toBe(postmaster);
    expect(isAlive(postmaster)).toBe(true);
    expect(await listedLicenseIds(first)).toEqual([...created].sort());
  });

  it('migrations are idempotent across restarts: schema_migrations lists each migration once', async () => {
    const rows = await withDatabase(async (c) =>
      (await c.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name')).rows.map((r) => r.name),
    );
    expect(rows).toEqual(Object.keys(migrations).sort());
    expect(rows).toContain('0001_foundation');
    // One admin from SVC_ADMIN_EMAIL, whatever the number of starts; one signing key.
    const admins = await withDatabase(async (c) => (await c.query('SELECT email FROM users')).rows);
    expect(admins).toEqual([{ email: ADMIN_EMAIL }]);
    const keys = await withDatabase(
      async (c) => (await c.query('SELECT count(*)::int AS n FROM identity_signing_keys')).rows[0],
    );
    expect(keys).toEqual({ n: 1 });

    const exit = await stopProcess(current!, 'SIGTERM');
    current = null;
    expect(exit).toEqual({ code: 0, signal: null });
    await expectPostgresStopped();
  });

  it('SIGTERM during start-up waits for the start to finish, then stops cleanly (no orphaned PostgreSQL)', async () => {
    const p = await spawnPortal(portalEnv());
    await p.waitForOutput(/embedded PostgreSQL started/, 60_000);
    p.child.kill('SIGTERM');
    const exit = await waitForExit(p, 60_000, 'SIGTERM');
    expect(exit).toEqual({ code: 0, signal: null });
    expect(p.stdout()).toContain('signal received during start-up: stopping once started');
    expect(p.stdout()).toContain('portal listening');
    expect(p.stdout()).toContain('embedded PostgreSQL stopped');
    await expectPostgresStopped();
  });

  it('a request that never finishes is cut after SVC_SHUTDOWN_GRACE_SECONDS; the database still stops cleanly', async () => {
    const p = await start({ SVC_SHUTDOWN_GRACE_SECONDS: '1' });
    const token = await adminToken(p);
    const outcome = new Promise<string>((resolve) => {
      const req = http.request(`${p.url}/api/licenses`, {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': '1000', 'x-identity-token': token },
      });
      req.on('response', (res) => resolve(`response ${res.statusCode}`));
      req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      req.write('{"tier":"msp",');
    });
    // The portal has the request (headers in, route found) before the signal.
    await p.waitForOutput(requestsLogged('POST', '/api/licenses', 1));
    const exit = await stopProcess(p, 'SIGTERM', 30_000);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(await outcome).toBe('ECONNRESET');
    expect(p.stdout()).toContain('shutdown grace period over: closing the remaining connections');
    expect(p.stdout()).toContain('embedded PostgreSQL stopped');
    await expectPostgresStopped();
  });

  it('a start that fails after PostgreSQL is up (HTTP port taken) exits 1 and stops PostgreSQL', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    try {
      const taken = (blocker.address() as net.AddressInfo).port;
      const p = await spawnPortal({ ...portalEnv(), port: taken });
      const exit = await waitForExit(p, 60_000);
      expect(exit).toEqual({ code: 1, signal: null });
      expect(p.stdout()).toContain('embedded PostgreSQL started');
      expect(p.stderr()).toMatch(/^The portal failed to start: .*EADDRINUSE/);
      expect(p.stdout()).toContain('embedded PostgreSQL stopped');
      await expectPostgresStopped();
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('an embedded PostgreSQL port already in use exits 1 with an error naming SVC_EMBEDDED_PG_PORT', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    try {
      const taken = (blocker.address() as net.AddressInfo).port;
      const p = await spawnPortal({ ...portalEnv(), pgPort: taken });
      const exit = await waitForExit(p, 90_000);
      expect(exit).toEqual({ code: 1, signal: null });
      // Checked before PostgreSQL starts (db/embedded-port.ts): one line naming the setting.
      expect(p.stderr()).toBe(
        `The portal failed to start: SVC_EMBEDDED_PG_PORT=${taken}: 127.0.0.1:${taken} is already in use by another process; set SVC_EMBEDDED_PG_PORT to a free port, or unset it to let the portal choose one\n`,
      );
      await expectPostgresStopped();
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
    // And the data dir is fine for the next, correctly configured start.
    const next = await start();
    expect(await listedLicenseIds(next)).toEqual([...created].sort());
    expect(await stopProcess(next, 'SIGTERM')).toEqual({ code: 0, signal: null });
    await expectPostgresStopped();
  });

  it('no process output carries the admin password, the database password or a token', async () => {
    const { password } = JSON.parse(await fs.readFile(path.join(dataDir, 'postgres-credentials.json'), 'utf8')) as {
      password: string;
    };
    const output = allOutput();
    expect(output).toContain('portal listening');
    expect(password).toMatch(/^[0-9a-f]{48}$/);
    expect(output).not.toContain(password);
    expect(output).not.toContain(ADMIN_PASSWORD);
    for (const token of tokens) expect(output).not.toContain(token.split('.')[2]);
    expect(tokens.length).toBeGreaterThan(5);
  });
});
