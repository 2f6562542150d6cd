import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LEGACY_KEY, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { killAll, makeDataDir, spawnPortal, waitForExit } from '@svc/test-support/portal-process';

/**
 * SVC_ACCESS_LOG (docs/deployment.md#access-log): at most one line per request, written when the
 * response has gone. `off`: none; `errors` (the default): statuses of 400 and above only; `all`:
 * every request. Each portal here runs at info level and keeps every line it writes.
 */

interface Entry {
  level: number;
  msg: string;
  reqId?: string;
  req?: { method: string; url: string; host?: string; ip?: string };
  statusCode?: number;
  size?: number;
  responseTime?: number;
}

const WAIT = { timeout: 15_000, interval: 20 };

interface Logged {
  portal: TestPortal;
  entries(): Entry[];
  /** The access lines ("request completed") of requests to `path` (query string ignored). */
  accessLines(path: string): Entry[];
}

async function portalWith(env: Record<string, string>): Promise<Logged> {
  const lines: string[] = [];
  const portal = await startTestPortal({
    env: { SVC_LOG_LEVEL: 'info', ...env },
    logDestination: { write: (line: string) => void lines.push(line) },
  });
  const entries = () => lines.map((l) => JSON.parse(l) as Entry);
  return {
    portal,
    entries,
    accessLines: (path) => entries().filter((e) => e.msg === 'request completed' && e.req?.url.split('?')[0] === path),
  };
}

const get = async (p: TestPortal, path: string, headers: Record<string, string> = {}) => {
  const res = await fetch(`${p.url}${path}`, { headers, signal: AbortSignal.timeout(10_000) });
  const body = await res.arrayBuffer();
  return { status: res.status, bytes: body.byteLength };
};

/** Makes the portal's database refuse connections (and ends the open ones): /readyz answers 503. */
async function blockDatabase(databaseUrl: string, allow: boolean): Promise<void> {
  const url = new URL(databaseUrl);
  const name = url.pathname.slice(1);
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(`ALTER DATABASE ${client.escapeIdentifier(name)} WITH ALLOW_CONNECTIONS ${allow}`);
    if (!allow) await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);
  } finally {
    await client.end();
  }
}

describe('SVC_ACCESS_LOG=all', () => {
  let logged: Logged;
  const secret = `s-${randomBytes(12).toString('hex')}`;
  beforeAll(async () => {
    logged = await portalWith({ SVC_ACCESS_LOG: 'all' });
  });
  afterAll(() => logged?.portal.close());

  it('writes exactly one line per request, with method, masked URL, status, size, time, request id and address', async () => {
    const { portal } = logged;
    const ok = await get(portal, '/api/health');
    expect(ok.status).toBe(200);
    expect((await get(portal, `/api/nope?token=${secret}&page=2`)).status).toBe(404);
    expect((await get(portal, '/api/license', { 'x-api-key': LEGACY_KEY })).status).toBe(200);
    await vi.waitFor(() => expect(logged.accessLines('/api/license')).toHaveLength(1), WAIT);

    const [health] = logged.accessLines('/api/health');
    expect(logged.accessLines('/api/health')).toHaveLength(1);
    expect(health).toMatchObject({
      level: 30,
      reqId: expect.stringMatching(/^req-/),
      req: { method: 'GET', url: '/api/health', ip: '127.0.0.1' },
      statusCode: 200,
      size: ok.bytes,
    });
    expect(health?.responseTime).toBeGreaterThanOrEqual(0);
    // The query string stays, its sensitive values masked (logging.ts's rules).
    expect(logged.accessLines('/api/nope')).toEqual([
      expect.objectContaining({ req: expect.objectContaining({ url: '/api/nope?token=[REDACTED]&page=2' }) }),
    ]);
    expect(logged.accessLines('/api/nope')[0]?.statusCode).toBe(404);
    // Fastify's own pair of lines is gone; request ids are not repeated across lines of this kind.
    const texts = logged.entries().map((e) => e.msg);
    expect(texts).not.toContain('incoming request');
    const ids = logged
      .entries()
      .filter((e) => e.msg === 'request completed')
      .map((e) => e.reqId);
    expect(new Set(ids).size).toBe(ids.length);
    // Neither the key in its header nor the secret in the query string reaches the log.
    const text = JSON.stringify(logged.entries());
    expect(text).not.toContain(secret);
    expect(text).not.toContain(LEGACY_KEY);
  });
});

describe('SVC_ACCESS_LOG=errors (the default)', () => {
  let logged: Logged;
  beforeAll(async () => {
    logged = await portalWith({});
  });
  afterAll(async () => {
    await blockDatabase(logged.portal.databaseUrl, true);
    await logged?.portal.close();
  });

  it('is the default', () => {
    expect(logged.portal.ctx.config.accessLog).toBe('errors');
  });

  it('writes nothing for a 200, exactly one line for a 4xx and for a 5xx', async () => {
    const { portal } = logged;
    expect((await get(portal, '/api/health')).status).toBe(200);
    expect((await get(portal, '/readyz')).status).toBe(200);
    expect((await get(portal, '/api/licenses')).status).toBe(401);
    await vi.waitFor(() => expect(logged.accessLines('/api/licenses')).toHaveLength(1), WAIT);
    expect(logged.accessLines('/api/licenses')[0]).toMatchObject({ level: 30, statusCode: 401 });

    await blockDatabase(portal.databaseUrl, false);
    expect((await get(portal, '/readyz')).status).toBe(503);
    await vi.waitFor(() => expect(logged.accessLines('/readyz')).toHaveLength(1), WAIT);
    expect(logged.accessLines('/readyz')[0]).toMatchObject({ req: { method: 'GET' }, statusCode: 503 });
    // The 200s wrote nothing, before and after.
    expect(logged.accessLines('/api/health')).toEqual([]);
    expect(logged.entries().filter((e) => e.msg === 'request completed')).toHaveLength(2);
  });
});

describe('SVC_ACCESS_LOG=off', () => {
  let logged: Logged;
  beforeAll(async () => {
    logged = await portalWith({ SVC_ACCESS_LOG: 'off' });
  });
  afterAll(() => logged?.portal.close());

  it('writes no line for any request, successful or not', async () => {
    const { portal } = logged;
    expect((await get(portal, '/api/health')).status).toBe(200);
    expect((await get(portal, '/api/nope')).status).toBe(404);
    expect((await get(portal, '/api/licenses')).status).toBe(401);
    // Something the portal logs itself after those requests bounds the window: a legacy-key use (a warning).
    expect((await get(portal, '/api/license', { 'x-api-key': LEGACY_KEY })).status).toBe(200);
    await vi.waitFor(() => expect(logged.entries().some((e) => e.level === 40)).toBe(true), WAIT);
    expect(logged.entries().filter((e) => e.reqId !== undefined && e.level === 30)).toEqual([]);
  });
});

describe('an invalid SVC_ACCESS_LOG', () => {
  afterAll(() => killAll());

  it('stops the start with exit code 2 and one line naming the setting and its values', async () => {
    const p = await spawnPortal({ dataDir: await makeDataDir('svc-access-log-'), env: { SVC_ACCESS_LOG: 'loud' } });
    expect(await waitForExit(p, 30_000)).toEqual({ code: 2, signal: null });
    expect(p.stderr()).toBe('Invalid configuration: SVC_ACCESS_LOG must be one of off, errors, all (got "loud")\n');
    expect(p.stdout()).toBe('');
  });
});
