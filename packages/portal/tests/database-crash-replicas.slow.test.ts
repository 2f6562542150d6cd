import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controlEmbeddedPostgres, type EmbeddedServer, startEmbeddedPostgres } from '../src/db/embedded.ts';
import { http as call, withToken } from '@svc/test-support/http';
import { freePort } from '@svc/test-support/ports';
import { ADMIN_EMAIL, ADMIN_PASSWORD, KEY_ENCRYPTION_KEY, login } from '@svc/test-support/portal';
import { until } from '@svc/test-support/wait';
import {
  describe as output,
  isAlive,
  killAll,
  makeDataDir,
  postgresProcessesFor,
  readPostmasterPid,
  startPortalProcess,
  type PortalProcess,
  waitForDeath,
} from '@svc/test-support/portal-process';

/**
 * PostgreSQL killed with -9 under load took down a replica (`Unhandled
 * 'error' event ... 57P01` on a checked-out pool client). Two portal processes on one
 * PostgreSQL, both under load, the postmaster killed and then started again on the same data
 * directory: both processes live through it, every answer during the outage is a 503 with
 * Retry-After (never a reset or a 500), and both answer 200 again by themselves.
 */

/** The two answers of a database the pool cannot use (src/http/errors.ts). */
const OUTAGE_BODIES = ['Database unavailable, try again shortly', 'Database busy, try again shortly'];
const WORKERS_PER_REPLICA = 6;
/** Each load worker sends at most this many requests, and stops at the test's deadline in any case. */
const MAX_REQUESTS_PER_WORKER = 4_000;

interface Tally {
  ok: number;
  /** 503s with Retry-After and the outage body. */
  unavailable: number;
  /** Anything else: a reset, a 500, a 503 without Retry-After. Must stay empty. */
  other: string[];
}

let dir: string;
let pgPort: number;
let server: EmbeddedServer;
let a: PortalProcess;
let b: PortalProcess;
let token: string;

beforeAll(async () => {
  dir = await makeDataDir('svc-pgcrash-');
  pgPort = await freePort();
  server = await startEmbeddedPostgres({
    dataDir: dir,
    port: pgPort,
    logger: pino({ level: 'silent' }),
    settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' },
  });
  const env = {
    DATABASE_URL: server.url,
    // One issuer for both, so a token from one replica is good on the other.
    SVC_BASE_URL: 'http://portal.test',
    SVC_ADMIN_EMAIL: ADMIN_EMAIL,
    SVC_ADMIN_PASSWORD: ADMIN_PASSWORD,
    SVC_IDENTITY_KEY_ENCRYPTION_KEY: KEY_ENCRYPTION_KEY,
    SVC_LOG_LEVEL: 'info', // the 'portal listening' line tells the port it picked
  };
  // One after the other: the first applies the migrations.
  a = await startPortalProcess({ dataDir: await makeDataDir('svc-pgcrash-a-'), env });
  b = await startPortalProcess({ dataDir: await makeDataDir('svc-pgcrash-b-'), env });
  token = await login(a.url, ADMIN_EMAIL, ADMIN_PASSWORD);
});

afterAll(async () => {
  await server?.stop().catch(() => undefined);
  await killAll();
});

/** One request of the load: a read and a write (a transaction) in turn. */
async function oneRequest(url: string, i: number, tally: Tally): Promise<void> {
  try {
    const res =
      i % 2 === 0
        ? await call(url, 'GET', '/api/sessions?limit=5', { headers: withToken(token) })
        : await call(url, 'POST', '/api/licenses', {
            headers: withToken(token),
            json: { tier: 'business', client_id: 'crash-load', name: `load ${i}` },
          });
    if (res.status === 200 || res.status === 201) tally.ok++;
    else if (
      res.status === 503 &&
      /^[1-9]\d*$/.test(res.headers.get('retry-after') ?? '') &&
      OUTAGE_BODIES.includes((res.body as { error?: string }).error ?? '')
    )
      tally.unavailable++;
    else tally.other.push(`${res.status} retry-after=${res.headers.get('retry-after')} ${res.text.slice(0, 200)}`);
  } catch (err) {
    tally.other.push(`no answer: ${(err as Error).message} ${String((err as Error).cause ?? '')}`);
  }
}

function startLoad(url: string, tally: Tally, stop: { now: boolean; deadline: number }): Promise<unknown> {
  return Promise.all(
    Array.from({ length: WORKERS_PER_REPLICA }, async (_, w) => {
      for (let i = 0; i < MAX_REQUESTS_PER_WORKER && !stop.now && Date.now() < stop.deadline; i++)
        await oneRequest(url, w + i, tally);
    }),
  );
}

/**
 * `pg_ctl start` on the crashed cluster, tried again while it fails: the shared memory of the
 * killed postmaster can outlive its processes for a moment (the portal's supervisor retries
 * the same way). Bounded in attempts; the pause only paces them.
 */
async function startAgain(): Promise<void> {
  let last: unknown;
  for (let attempt = 0; attempt < 40; attempt++) {
    try {
      await controlEmbeddedPostgres(dir, 'start', pgPort);
      return;
    } catch (err) {
      last = err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw last;
}

const answers = async (p: PortalProcess) =>
  (await call(p.url, 'GET', '/api/sessions?limit=5', { headers: withToken(token) }).catch(() => null))?.status;

describe('PostgreSQL killed with -9 under two loaded replicas', () => {
  it('both replicas live through it: 503 with Retry-After during the outage, 200 again after the restart', async () => {
    const tallies = {
      a: { ok: 0, unavailable: 0, other: [] } as Tally,
      b: { ok: 0, unavailable: 0, other: [] } as Tally,
    };
    const stop = { now: false, deadline: Date.now() + 150_000 };
    const load = Promise.all([startLoad(a.url, tallies.a, stop), startLoad(b.url, tallies.b, stop)]);
    try {
      await until(
        () => tallies.a.ok >= 20 && tallies.b.ok >= 20,
        60_000,
        () => `load answered: ${JSON.stringify(tallies)}`,
      );

      const postmaster = await readPostmasterPid(dir);
      expect(postmaster).not.toBeNull();
      process.kill(postmaster!, 'SIGKILL');
      expect(await waitForDeath(postmaster!, 30_000)).toBe(true);
      // Both replicas notice: the requests in flight and the ones after get 503s.
      const before = { a: tallies.a.unavailable, b: tallies.b.unavailable };
      await until(
        () => (tallies.a.unavailable > before.a && tallies.b.unavailable > before.b) || a.hasExited() || b.hasExited(),
        60_000,
        () => `503s during the outage: ${JSON.stringify(tallies)}`,
      );
      expect(a.hasExited(), output(a)).toBe(false);
      expect(b.hasExited(), output(b)).toBe(false);

      // The killed postmaster's backends exit on their own; then the same cluster starts again.
      await until(
        async () => (await postgresProcessesFor(dir)).length === 0,
        60_000,
        () => 'orphaned backends gone',
      );
      await startAgain();
      const restarted = await readPostmasterPid(dir);
      expect(restarted !== null && restarted !== postmaster && isAlive(restarted)).toBe(true);

      await until(
        async () => (await answers(a)) === 200 && (await answers(b)) === 200,
        60_000,
        () => `both replicas answering 200 again: ${JSON.stringify(tallies)}`,
      );
      const okBefore = { a: tallies.a.ok, b: tallies.b.ok };
      await until(
        () => tallies.a.ok > okBefore.a && tallies.b.ok > okBefore.b,
        60_000,
        () => `the load served again: ${JSON.stringify(tallies)}`,
      );
    } finally {
      stop.now = true;
      await load;
    }

    expect(a.hasExited(), output(a)).toBe(false);
    expect(b.hasExited(), output(b)).toBe(false);
    expect(tallies.a.other).toEqual([]);
    expect(tallies.b.other).toEqual([]);
    for (const p of [a, b]) {
      expect(p.stderr()).not.toContain("Unhandled 'error' event");
      const created = await call(p.url, 'POST', '/api/licenses', {
        headers: withToken(token),
        json: { tier: 'msp', client_id: 'crash-after', name: `after the crash ${p.port}` },
      });
      expect(created.status, created.text).toBe(201);
      const listed = await call(p.url, 'GET', '/api/licenses?client_id=crash-after', { headers: withToken(token) });
      expect(listed.status).toBe(200);
    }
  });
});
