import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestCa, HttpsReceiver } from '@svc/test-support/https-receiver';
import { describe as describeFailure, MAX_IN_FLIGHT_PER_ORIGIN, WebhookHttpClient } from './http-client.ts';

/**
 * A receiver that accepts TCP and never answers. Every delivery to it must fail on its own
 * 5 s timeout, concurrently. (With undici's HTTP/2 probe on, the requests queued behind the
 * first connection and none of the per-request timeouts ran while they waited: six
 * deliveries took ~30 s, one after another, and a busy fan-out grew without bound.)
 */
describe('WebhookHttpClient against a TCP black hole', () => {
  let server: net.Server;
  const sockets = new Set<net.Socket>();
  let port = 0;
  beforeAll(async () => {
    server = net.createServer((s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it('times out every concurrent delivery in parallel instead of queueing them', async () => {
    const client = new WebhookHttpClient({
      resolver: async () => ['127.0.0.1'],
      allow: [ipaddr.parseCIDR('127.0.0.0/8')],
      caFile: null,
    });
    try {
      const posts = Array.from({ length: 6 }, () =>
        client.post(`https://127.0.0.1:${port}/hook`, { 'content-type': 'application/json' }, '{}'),
      );
      // In parallel: the black hole holds all six connections at once (queued behind one
      // connection, they would reach it one after another, each after the previous timeout).
      await vi.waitFor(() => expect(sockets.size).toBe(6), { timeout: 20_000, interval: 20 });
      const results = await Promise.all(posts);
      for (const r of results) {
        expect(r.statusCode).toBeNull();
        expect(r.error).toMatch(/timeout/i);
      }
    } finally {
      await client.close().catch(() => undefined);
    }
  });

  it(`holds at most ${MAX_IN_FLIGHT_PER_ORIGIN} deliveries in flight per origin: more wait their turn (bounded queue, deadline) and are shed unsent; other origins are unaffected; once they time out, one at a time`, async () => {
    const ca = await createTestCa();
    const healthy = await HttpsReceiver.start(ca);
    // Answers TLS and never the request: what it counts is attempts sent, whatever the connection
    // pool does with its sockets (a raw TCP count saw one connection more under load).
    const hang = (await HttpsReceiver.start(ca)).respond({ kind: 'hang' });
    const client = new WebhookHttpClient({
      resolver: async () => ['127.0.0.1'],
      allow: [ipaddr.parseCIDR('127.0.0.0/8')],
      caFile: ca.caFile,
      queueMax: 2,
      queueWaitMs: 1500,
    });
    const shed = (error: string | RegExp) => ({
      statusCode: null,
      durationMs: expect.any(Number),
      error: typeof error === 'string' ? error : expect.stringMatching(error),
      shed: true,
    });
    try {
      const post = (url: string) => client.post(url, { 'content-type': 'application/json' }, '{}');
      const hole = hang.url();
      const held = Array.from({ length: MAX_IN_FLIGHT_PER_ORIGIN }, () => post(hole));
      // Two wait their turn; the queue (2) is then full and a third is shed at once.
      const queuedAt = Date.now();
      const waiting = [post(hole), post(hole)].map((p) => p.then((r) => ({ r, after: Date.now() - queuedAt })));
      expect(await post(hole)).toEqual(
        shed(`not sent: ${MAX_IN_FLIGHT_PER_ORIGIN} deliveries to this receiver are in flight and its queue is full`),
      );
      // Another origin has its own room and its own queue: delivered while the black hole is saturated.
      expect(await post(healthy.url())).toEqual({
        statusCode: 200,
        durationMs: expect.any(Number),
        error: null,
        shed: false,
      });
      // Their turn does not come before the deadline (the held ones need 5 s): they wait for it
      // (queueWaitMs, 1.5 s), then are shed, never sent.
      for (const { r, after } of await Promise.all(waiting)) {
        expect(after).toBeGreaterThanOrEqual(1490);
        expect(r).toEqual(
          shed(
            new RegExp(
              `^not sent: ${MAX_IN_FLIGHT_PER_ORIGIN} deliveries to this receiver are in flight; waited \\d+\\.\\d s for a turn$`,
            ),
          ),
        );
      }
      const results = await Promise.all(held);
      expect(results.every((r) => r.error === 'timeout after 5 s' && !r.shed)).toBe(true);
      // 64 timeouts brought this receiver's limit down to one: one delivery is sent (and
      // held) again, a second one waits and is shed at its deadline.
      const again = post(hole);
      // Sent, not shed: the black hole has its connection.
      await vi.waitFor(() => expect(hang.requests.length).toBe(MAX_IN_FLIGHT_PER_ORIGIN + 1), {
        timeout: 10_000,
        interval: 20,
      });
      expect(await post(hole)).toEqual(
        shed(/^not sent: 1 delivery to this receiver is in flight; waited \d+\.\d s for a turn$/),
      );
      expect(await again).toMatchObject({ error: 'timeout after 5 s', shed: false });
      // The receiver only ever saw the attempts that were sent: 64, then 1.
      expect(hang.requests.length).toBe(MAX_IN_FLIGHT_PER_ORIGIN + 1);
    } finally {
      await client.close().catch(() => undefined);
      await hang.close();
      await healthy.close();
      await ca.cleanup();
    }
  });
});

describe('describe (the logged error of a failed attempt)', () => {
  it('replaces control characters a subscriber could put in an error message (a NUL would make the log entry unstorable)', () => {
    const err = Object.assign(new Error('fetch failed'), {
      cause: Object.assign(new Error("Hostname/IP does not match certificate's altnames: DNS:evil\u0000\r\nforged"), {
        code: 'ERR_TLS_CERT_ALTNAME_INVALID',
      }),
    });
    expect(describeFailure(err)).toBe(
      "ERR_TLS_CERT_ALTNAME_INVALID: Hostname/IP does not match certificate's altnames: DNS:evil   forged",
    );
  });

  it('names a timeout plainly', () => {
    expect(describeFailure(Object.assign(new Error('aborted'), { name: 'TimeoutError' }))).toBe('timeout after 5 s');
  });
});
