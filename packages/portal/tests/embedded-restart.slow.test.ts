import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http as request, withToken } from '@svc/test-support/http';
import { login } from '@svc/test-support/portal';
import { sampleValue, scrape } from '@svc/test-support/metrics-scrape';
import { expectFiring } from '@svc/test-support/promtool';
import {
  isAlive,
  killAll,
  makeDataDir,
  postgresProcessesFor,
  readPostmasterPid,
  sleep,
  startPortalProcess,
  stopProcess,
  waitForDeath,
  type PortalProcess,
} from '@svc/test-support/portal-process';

/**
 * The embedded PostgreSQL server is killed with -9 under a running
 * portal process. The portal notices, logs it, starts the server again (with backoff while
 * the start fails) and serves again without a restart of its own; GET /readyz says 503
 * meanwhile while GET /api/health (liveness) stays 200.
 */

const ADMIN_EMAIL = 'restart-admin@test.local';
const ADMIN_PASSWORD = 'restart-password-0123';
const UNAVAILABLE = { error: 'Database unavailable, try again shortly' };
const METRICS_TOKEN = 'restart-metrics-token-0123456789abcdef';
const restarts = async () => sampleValue(await scrape(portal.url, METRICS_TOKEN), 'svc_embedded_db_restarts_total');

let portal: PortalProcess;
let licenseId: string;

async function token(): Promise<string> {
  return login(portal.url, ADMIN_EMAIL, ADMIN_PASSWORD);
}

/** Hold 127.0.0.1:port so a PostgreSQL start on it fails: the outage lasts as long as the test wants. */
function holdPort(port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer((socket) => socket.destroy());
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port }, () => resolve(server));
  });
}

/** Poll `fn` (bounded) until it returns true. */
async function until(what: string, fn: () => Promise<boolean> | boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await fn()) return;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}\n${portal.stdout().slice(-3000)}`);
}

const count = (text: string, needle: string) => text.split(needle).length - 1;

beforeAll(async () => {
  const dataDir = await makeDataDir('svc-pgrestart-');
  portal = await startPortalProcess({
    dataDir,
    env: {
      SVC_ADMIN_EMAIL: ADMIN_EMAIL,
      SVC_ADMIN_PASSWORD: ADMIN_PASSWORD,
      SVC_LOG_LEVEL: 'info',
      SVC_METRICS_TOKEN: METRICS_TOKEN,
    },
  });
  const created = await request(portal.url, 'POST', '/api/licenses', {
    headers: withToken(await token()),
    json: { tier: 'business', client_id: 'restart-client', name: 'before the crash' },
  });
  expect(created.status).toBe(201);
  licenseId = created.body.license.id as string;
});

afterAll(async () => {
  await killAll();
});

describe('the embedded PostgreSQL server dies under a running portal', () => {
  it('GET /readyz answers 200 {"status":"ready"} without credentials while the database answers', async () => {
    const res = await request(portal.url, 'GET', '/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready' });
  });

  it('after kill -9 of the postmaster: 503s and readiness 503, the restart is logged and retried, then the portal serves again by itself', async () => {
    const admin = await token();
    expect(await restarts()).toBe(0);
    const healthy = { scrape: await scrape(portal.url, METRICS_TOKEN), at: new Date() };
    const postmaster = (await readPostmasterPid(portal.dataDir))!;
    expect(isAlive(postmaster)).toBe(true);
    process.kill(postmaster, 'SIGKILL');
    expect(await waitForDeath(postmaster, 10_000)).toBe(true);
    // The port is free now; taking it makes every restart attempt fail until we let go.
    const holder = await holdPort(portal.pgPort);
    try {
      await portal.waitForOutput(/embedded PostgreSQL exited unexpectedly; restarting it/, 30_000);

      const ready = await request(portal.url, 'GET', '/readyz');
      expect(ready.status).toBe(503);
      expect(ready.headers.get('retry-after')).toBe('5');
      expect(ready.body).toEqual(UNAVAILABLE);
      const api = await request(portal.url, 'GET', '/api/licenses?client_id=restart-client', {
        headers: withToken(admin),
      });
      expect(api.status).toBe(503);
      expect(api.body).toEqual(UNAVAILABLE);
      // Liveness never touches the database: the process is alive, only not ready.
      const health = await request(portal.url, 'GET', '/api/health');
      expect(health.status).toBe(200);
      expect(health.body.status).toBe('ok');

      // The failed starts are logged and retried with a growing pause.
      await until(
        'two failed restart attempts',
        () => count(portal.stdout(), 'embedded PostgreSQL restart failed; retrying') >= 2,
      );
      const failures = portal
        .stdout()
        .split('\n')
        .filter((line) => line.includes('embedded PostgreSQL restart failed; retrying'))
        .map((line) => JSON.parse(line) as { attempt: number; retry_in_ms: number });
      expect(failures.slice(0, 2).map((f) => [f.attempt, f.retry_in_ms])).toEqual([
        [1, 500],
        [2, 1000],
      ]);
      expect((await request(portal.url, 'GET', '/readyz')).status).toBe(503);
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }

    await until(
      'readiness after the restart',
      async () => (await request(portal.url, 'GET', '/readyz')).status === 200,
    );
    // The server accepts connections before `pg_ctl start -w` returns, so readiness can come first.
    await portal.waitForOutput(/"msg":"embedded PostgreSQL restarted"/, 30_000);
    // Counted once, however many attempts the restart took.
    expect(await restarts()).toBe(1);
    // The shipped rule fires from these scrapes (test-support/promtool.ts), and not from the healthy one alone.
    const restarted = { scrape: await scrape(portal.url, METRICS_TOKEN), at: new Date() };
    const check = {
      shapes: { svc_embedded_db_restarts_total: 'counter' as const },
      alert: 'SvcPortalEmbeddedDbRestarted',
    };
    await expectFiring({
      ...check,
      phases: [
        { ...healthy, minutes: 10 },
        { ...restarted, minutes: 1 },
      ],
      firing: [{ severity: 'critical' }],
    });
    await expectFiring({ ...check, phases: [{ ...healthy, minutes: 11 }], firing: [] });
    const fresh = await readPostmasterPid(portal.dataDir);
    expect(fresh).not.toBeNull();
    expect(fresh).not.toBe(postmaster);
    expect(isAlive(fresh!)).toBe(true);

    // The same portal process, the data from before the crash, and writes work again.
    expect(portal.hasExited()).toBe(false);
    const listed = await request(portal.url, 'GET', '/api/licenses?client_id=restart-client', {
      headers: withToken(admin),
    });
    expect(listed.status).toBe(200);
    expect((listed.body.licenses as { id: string }[]).map((l) => l.id)).toEqual([licenseId]);
    const created = await request(portal.url, 'POST', '/api/licenses', {
      headers: withToken(admin),
      json: { tier: 'business', client_id: 'restart-client', name: 'after the crash' },
    });
    expect(created.status).toBe(201);
  });

  it('a clean stop of the portal stops PostgreSQL and does not start it again', async () => {
    const restartsBefore = count(portal.stdout(), 'exited unexpectedly');
    const exit = await stopProcess(portal, 'SIGTERM');
    expect(exit).toEqual({ code: 0, signal: null });
    expect(portal.stdout()).toContain('embedded PostgreSQL stopped');
    expect(count(portal.stdout(), 'exited unexpectedly')).toBe(restartsBefore);
    expect(await readPostmasterPid(portal.dataDir)).toBeNull();
    expect(await postgresProcessesFor(portal.dataDir)).toEqual([]);
  });
});
