import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MAX_RETRY_WAIT_MS, retryDelayMs, sendRetryingOnce } from '../src/api/retry.ts';

/**
 * The console's API client sends a GET once more after the portal's
 * Retry-After when the answer is a 503 (a busy pool, a database restarting), and never
 * repeats a write. Against a real HTTP server on 127.0.0.1 that answers from a script.
 */

interface Planned {
  status: number;
  headers?: Record<string, string>;
}

let server: http.Server;
let base: string;
let plan: Planned[] = [];
let seen: { method: string; at: number }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push({ method: req.method ?? '', at: performance.now() });
    req.resume();
    const next = plan.shift() ?? { status: 200 };
    const body =
      next.status === 503 ? { error: 'Database busy, try again shortly' } : { ok: true, answer: seen.length };
    res.writeHead(next.status, { 'content-type': 'application/json', ...next.headers });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  plan = [];
  seen = [];
});

const busy = (retryAfter?: string): Planned => ({
  status: 503,
  headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter },
});
const send = (method: string) => () =>
  fetch(`${base}/api/licenses`, { method, ...(method === 'GET' ? {} : { body: '{}' }) });

/** Records the waits asked for instead of sleeping (one case below uses the real timer). */
function recorder() {
  const waits: number[] = [];
  return { waits, wait: async (ms: number) => void waits.push(ms) };
}

describe('sendRetryingOnce', () => {
  it('a GET answered 503 with Retry-After is sent once more after that wait, and the second answer is the result', async () => {
    plan = [busy('1')];
    const started = performance.now();
    const res = await sendRetryingOnce('GET', send('GET'));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, answer: 2 });
    expect(seen.map((s) => s.method)).toEqual(['GET', 'GET']);
    // The real timer: the retry is not sent before Retry-After (1 s) has passed.
    expect((seen[1]?.at ?? 0) - (seen[0]?.at ?? 0)).toBeGreaterThanOrEqual(990);
    expect(performance.now() - started).toBeGreaterThanOrEqual(990);
  });

  it('only once: a second 503 is the answer', async () => {
    plan = [busy('1'), busy('1')];
    const { waits, wait } = recorder();
    const res = await sendRetryingOnce('GET', send('GET'), wait);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: 'Database busy, try again shortly' });
    expect(seen.length).toBe(2);
    expect(waits).toEqual([1000]);
  });

  it.each(['POST', 'PATCH', 'PUT', 'DELETE'])(
    'a %s answered 503 with Retry-After is not sent again',
    async (method) => {
      plan = [busy('1')];
      const { waits, wait } = recorder();
      const res = await sendRetryingOnce(method, send(method), wait);
      expect(res.status).toBe(503);
      expect(seen.map((s) => s.method)).toEqual([method]);
      expect(waits).toEqual([]);
    },
  );

  it.each([
    ['no Retry-After', busy()],
    ['a Retry-After longer than the console waits', busy(String(MAX_RETRY_WAIT_MS / 1000 + 1))],
    ['an unreadable Retry-After', busy('soon')],
    ['a 500', { status: 500, headers: { 'retry-after': '1' } }],
    ['a 429', { status: 429, headers: { 'retry-after': '1' } }],
  ])('a GET answered with %s is not sent again', async (_what, answer) => {
    plan = [answer];
    const { waits, wait } = recorder();
    const res = await sendRetryingOnce('GET', send('GET'), wait);
    expect(res.status).toBe(answer.status);
    expect(seen.length).toBe(1);
    expect(waits).toEqual([]);
  });

  it("waits the portal's 5 s (a database that is down) at most, and a Retry-After of 0 at once", async () => {
    plan = [busy('5'), busy('0')];
    const { waits, wait } = recorder();
    expect((await sendRetryingOnce('GET', send('GET'), wait)).status).toBe(503);
    expect(seen.length).toBe(2);
    plan = [busy('0')];
    expect((await sendRetryingOnce('GET', send('GET'), wait)).status).toBe(200);
    expect(waits).toEqual([5000, 0]);
  });
});

describe('retryDelayMs', () => {
  const answer = (status: number, retryAfter?: string) =>
    new Response(null, { status, headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter } });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-03-01T12:00:00Z');
    expect(retryDelayMs('GET', answer(503, '2'), now)).toBe(2000);
    expect(retryDelayMs('get', answer(503, ' 1 '), now)).toBe(1000);
    expect(retryDelayMs('HEAD', answer(503, '1'), now)).toBe(1000);
    expect(retryDelayMs('GET', answer(503, 'Sun, 01 Mar 2026 12:00:03 GMT'), now)).toBe(3000);
    // A date already past: at once.
    expect(retryDelayMs('GET', answer(503, 'Sun, 01 Mar 2026 11:59:00 GMT'), now)).toBe(0);
    expect(retryDelayMs('GET', answer(503, 'Sun, 01 Mar 2026 12:00:06 GMT'), now)).toBeNull();
    expect(retryDelayMs('GET', answer(503, '-1'), now)).toBeNull();
  });
});
