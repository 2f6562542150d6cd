import type net from 'node:net';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDatabaseBusy, isDatabaseUnavailable, openDatabase } from '../src/db/pool.ts';
import { http as call, withToken } from '@svc/test-support/http';
import { listenOnLoopback } from '@svc/test-support/ports';
import { createTestDatabase, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { until } from '@svc/test-support/wait';

/**
 * The pool once had one 2 s bound for opening a connection and for waiting
 * on a full pool, so a busy machine got "Database unavailable" 503s. The two bounds are
 * separate now (SVC_DB_CONNECT_TIMEOUT_MS, SVC_DB_POOL_WAIT_MS), and a full pool answers its
 * own 503 with a short Retry-After.
 */

const silent = pino({ level: 'silent' });

/** Rejects with what `run` threw and how long that took; fails if it resolved. */
async function failure(run: () => Promise<unknown>): Promise<{ err: unknown; ms: number }> {
  const started = performance.now();
  try {
    await run();
  } catch (err) {
    return { err, ms: performance.now() - started };
  }
  throw new Error('expected a failure');
}

describe('the pool: connect bound and wait bound', () => {
  let url: string;
  beforeAll(async () => {
    url = await createTestDatabase();
  });

  it('a database that accepts the connection and never answers fails after the connect bound, as "unavailable"', async () => {
    const sockets: net.Socket[] = [];
    // Takes the TCP connection and says nothing, as a host behind a dead proxy or a hung server.
    const mute = await listenOnLoopback((socket) => void sockets.push(socket));
    const handle = openDatabase(`postgres://nobody:nothing@127.0.0.1:${mute.port}/none`, {
      max: 1,
      logger: silent,
      connectTimeoutMs: 200,
      poolWaitMs: 60_000,
    });
    try {
      const { err, ms } = await failure(() => handle.pool.query('SELECT 1'));
      expect(ms).toBeGreaterThanOrEqual(195);
      expect(isDatabaseUnavailable(err)).toBe(true);
      expect(isDatabaseBusy(err)).toBe(false);
      expect(sockets.length).toBe(1);
    } finally {
      await handle.pool.end();
      for (const s of sockets) s.destroy();
      await mute.close();
    }
  });

  it('a checkout that finds every connection busy fails after the wait bound as "busy"; the pool works on', async () => {
    const handle = openDatabase(url, { max: 1, logger: silent, connectTimeoutMs: 60_000, poolWaitMs: 300 });
    try {
      const held = await handle.pool.connect();
      const { err, ms } = await failure(() => handle.pool.connect());
      expect(ms).toBeGreaterThanOrEqual(295);
      expect(isDatabaseBusy(err)).toBe(true);
      expect(isDatabaseUnavailable(err)).toBe(true);
      expect((err as Error).message).toBe('no database connection became free within 300 ms');
      // pool.query (the callback form) is bounded the same way.
      const viaQuery = await failure(() => handle.pool.query('SELECT 1'));
      expect(isDatabaseBusy(viaQuery.err)).toBe(true);

      held.release();
      // The waiters that gave up take nothing: the one connection serves the next caller.
      const { rows } = await handle.pool.query<{ one: number }>('SELECT 1 AS one');
      expect(rows).toEqual([{ one: 1 }]);
      await until(() => handle.pool.waitingCount === 0 && handle.pool.idleCount === 1);
      expect(handle.pool.totalCount).toBe(1);
    } finally {
      await handle.pool.end();
    }
  });

  it('the wait is not cut by the shorter connect bound', async () => {
    const handle = openDatabase(url, { max: 1, logger: silent, connectTimeoutMs: 100, poolWaitMs: 30_000 });
    try {
      // Opening the one connection may itself take longer than 100 ms on a busy machine: tried
      // again until it opens. The waiter below opens nothing: it gets this connection back.
      let held: pg.PoolClient | null = null;
      for (let attempt = 0; held === null && attempt < 100; attempt++)
        held = await handle.pool.connect().catch(() => null);
      if (held === null) throw new Error('no connection opened within 100 ms in 100 attempts');
      const waiting = handle.pool.connect();
      await until(() => handle.pool.waitingCount === 1);
      // Held for three connect bounds: a wait bounded by the connect timeout would have failed.
      await new Promise((r) => setTimeout(r, 300));
      held.release();
      const next = await waiting;
      expect((await next.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      next.release();
    } finally {
      await handle.pool.end();
    }
  });
});

describe('a portal whose only connection is busy', () => {
  let portal: TestPortal;
  let token: string;
  let locker: pg.Client;

  beforeAll(async () => {
    portal = await startTestPortal({ env: { SVC_DB_POOL_MAX: '1', SVC_DB_POOL_WAIT_MS: '500' } });
    token = await portal.adminToken();
    locker = new pg.Client({ connectionString: portal.databaseUrl });
    await locker.connect();
  });

  afterAll(async () => {
    await locker?.end().catch(() => undefined);
    await portal?.close();
  });

  it('a second request waits the wait bound, then gets 503 "Database busy" with Retry-After: 1; the first completes', async () => {
    // The first request takes the portal's one connection and blocks on a lock the test holds.
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE licenses IN ACCESS EXCLUSIVE MODE');
    const first = call(portal.url, 'GET', '/api/licenses', { headers: withToken(token) });
    await until(async () => {
      const { rows } = await locker.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE application_name = 'svc-portal' AND wait_event_type = 'Lock' AND datname = current_database()`,
      );
      return rows[0]?.n === 1;
    });

    const started = performance.now();
    const second = await call(portal.url, 'GET', '/api/licenses', { headers: withToken(token) });
    expect(performance.now() - started).toBeGreaterThanOrEqual(495);
    expect(second.status).toBe(503);
    expect(second.headers.get('retry-after')).toBe('1');
    expect(second.body).toEqual({ error: 'Database busy, try again shortly' });
    // Liveness never needs a connection.
    expect((await call(portal.url, 'GET', '/api/health')).status).toBe(200);

    await locker.query('COMMIT');
    const answered = await first;
    expect(answered.status).toBe(200);
    const after = await call(portal.url, 'GET', '/api/licenses', { headers: withToken(token) });
    expect(after.status).toBe(200);
  });
});
