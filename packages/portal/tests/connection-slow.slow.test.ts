import type net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectRaw, type RawConnection } from './helpers/raw-connection.ts';
import { LEGACY_KEY, startTestPortal } from '@svc/test-support/portal';
import { until } from '@svc/test-support/wait';

/**
 * With real sockets: the review's lockout. Connections from several
 * addresses, each under the per-address cap, fill the global cap with `POST /identity/token`
 * bodies sent a byte at a time; once each has had a window below the minimum rate it is slow,
 * and a newcomer takes a slow one's place instead of being closed. The caps and the window are
 * lowered by configuration to keep the test short; the minimum rate is the default
 * (1024 bytes per second). Every wait is for a condition, bounded.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every connection opened, destroyed at the end whatever happened. */
const opened = new Set<net.Socket>();
const connect = (url: string, from: string): Promise<RawConnection> => connectRaw(url, { from, track: opened });

const SLOW_MSG = 'connection slow: its request arrives below the minimum rate';

/** A portal with lowered caps and a 1 s rate window, and its log lines. */
async function portalWith(caps: { max: number; perAddress: number }) {
  const lines: string[] = [];
  const portal = await startTestPortal({
    env: {
      SVC_MAX_CONNECTIONS: String(caps.max),
      SVC_MAX_CONNECTIONS_PER_ADDRESS: String(caps.perAddress),
      SVC_SLOW_REQUEST_WINDOW_SECONDS: '1',
      SVC_LOG_LEVEL: 'debug',
    },
    logDestination: { write: (line: string) => void lines.push(line) },
  });
  const logged = () => lines.map((l) => JSON.parse(l) as { level: number; msg: string; address?: string });
  /** Addresses of the connections found slow so far, one entry each time one became slow. */
  const slowFrom = () =>
    logged()
      .filter((e) => e.msg === SLOW_MSG)
      .map((e) => e.address);
  return { portal, logged, slowFrom };
}

/** Starts a request whose body then comes a byte every `everyMs` (bounded by its length, stops when closed). */
function trickleLogin(c: RawConnection, contentLength: number, everyMs: number, stop: { stopped: boolean }): void {
  c.socket.write(
    'POST /identity/token HTTP/1.1\r\nHost: portal.test\r\nContent-Type: application/x-www-form-urlencoded\r\n' +
      `Content-Length: ${contentLength}\r\n\r\n`,
  );
  void (async () => {
    for (let i = 0; i < contentLength - 1 && !c.socket.destroyed && !stop.stopped; i++) {
      c.socket.write('a');
      await sleep(everyMs);
    }
  })();
}

/** One whole answer (headers and Content-Length body) after `before` characters, or whatever came before a close. */
async function answer(c: RawConnection, before: number): Promise<string> {
  const complete = () => {
    const text = c.data().slice(before);
    const end = text.indexOf('\r\n\r\n');
    if (end === -1) return false;
    const length = /\r\ncontent-length: (\d+)\r\n/i.exec(text.slice(0, end + 2));
    return length !== null && text.length >= end + 4 + Number(length[1]);
  };
  await until(
    () => complete() || c.socket.destroyed,
    15_000,
    () => `an answer, got ${JSON.stringify(c.data())}`,
  );
  return c.data().slice(before);
}

const bodyOf = (response: string) => response.slice(response.indexOf('\r\n\r\n') + 4);

afterEach(() => {
  for (const s of opened) s.destroy();
  opened.clear();
});

describe("the review's lockout: logins trickled from several addresses up to the caps", () => {
  const TRICKLERS = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'];
  const PER_ADDRESS = 12;
  const MAX = TRICKLERS.length * PER_ADDRESS;
  let p: Awaited<ReturnType<typeof portalWith>>;
  beforeAll(async () => {
    p = await portalWith({ max: MAX, perAddress: PER_ADDRESS });
  });
  afterAll(() => p.portal.close());

  it('keyed requests from another address are answered at once; the slow connections they displace are closed unanswered', async () => {
    const stop = { stopped: false };
    try {
      const tricklers: RawConnection[] = [];
      for (const from of TRICKLERS)
        for (let i = 0; i < PER_ADDRESS; i++) {
          const c = await connect(p.portal.url, from);
          // A byte every 400 ms: 2.5 bytes per second, far below 1024.
          trickleLogin(c, 1000, 400, stop);
          tricklers.push(c);
        }
      // Each has had a window below the rate: every one is slow (and none was cut meanwhile).
      await until(
        () => p.slowFrom().length >= MAX,
        20_000,
        () => `${MAX} slow, got ${p.slowFrom().length}`,
      );
      expect(p.slowFrom().sort()).toEqual(TRICKLERS.flatMap((a) => Array<string>(PER_ADDRESS).fill(a)));
      expect(tricklers.filter((c) => c.socket.destroyed)).toEqual([]);

      // Six keyed clients arrive at the full cap: each takes a slow connection's place (a
      // connection that has not sent a request yet is not displaced before slow ones).
      const keyed = await Promise.all(Array.from({ length: 6 }, () => connect(p.portal.url, '127.0.0.10')));
      const closedTricklers = () => tricklers.filter((c) => c.socket.destroyed);
      await until(
        () => closedTricklers().length >= 6,
        15_000,
        () => `six displaced, ${closedTricklers().length} so far`,
      );
      const started = Date.now();
      const answers = await Promise.all(
        keyed.map((c) => {
          c.socket.write(`GET /api/license HTTP/1.1\r\nHost: portal.test\r\nx-api-key: ${LEGACY_KEY}\r\n\r\n`);
          return answer(c, 0).then((text) => ({ text, ms: Date.now() - started }));
        }),
      );
      for (const a of answers) {
        expect(a.text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
        expect(JSON.parse(bodyOf(a.text))).toMatchObject({ valid: true, tier: 'msp' });
        // Answered in a request's usual time: the review's newcomers waited up to 60 s, or failed.
        expect(a.ms).toBeLessThan(5000);
      }

      // Exactly six tricklers were displaced: closed by the portal, never answered; the rest go on.
      expect(closedTricklers()).toHaveLength(6);
      for (const c of closedTricklers()) expect(c.data()).toBe('');
      const warnings = p.logged().filter((e) => e.msg === 'connection displaced: its request arrived too slowly');
      expect(warnings).toMatchObject([{ level: 40, address: expect.stringMatching(/^127\.0\.0\.[2-5]$/) }]);
      // No keyed connection was ever slow.
      expect(p.slowFrom()).not.toContain('127.0.0.10');
    } finally {
      stop.stopped = true;
    }
  });
});

describe('a body at the minimum rate keeps its place', () => {
  let p: Awaited<ReturnType<typeof portalWith>>;
  beforeAll(async () => {
    p = await portalWith({ max: 2, perAddress: 2 });
  });
  afterAll(() => p.portal.close());

  it('at the cap, the newcomer displaces the slow request, not the one arriving steadily', async () => {
    const stop = { stopped: false };
    try {
      const slow = await connect(p.portal.url, '127.0.0.2');
      trickleLogin(slow, 1000, 400, stop);

      // 4 KB every 100 ms (about 40 KB/s, and well above 1 KB/s on a loaded machine) of a 400 KB JSON body.
      const SIZE = 400 * 1024;
      const steady = await connect(p.portal.url, '127.0.0.3');
      steady.socket.write(
        `POST /identity/token HTTP/1.1\r\nHost: portal.test\r\nContent-Type: application/json\r\nContent-Length: ${SIZE}\r\n\r\n`,
      );
      let sent = 0;
      const sending = (async () => {
        while (sent < SIZE - 4096 && !steady.socket.destroyed && !stop.stopped) {
          steady.socket.write(' '.repeat(4096));
          sent += 4096;
          await sleep(100);
        }
      })();

      await until(
        () => p.slowFrom().includes('127.0.0.2'),
        20_000,
        () => 'the trickled request found slow',
      );
      const newcomer = await connect(p.portal.url, '127.0.0.4');
      newcomer.socket.write('GET /api/health HTTP/1.1\r\nHost: portal.test\r\n\r\n');
      expect(await answer(newcomer, 0)).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      await slow.closed;
      expect(slow.data()).toBe('');
      expect(steady.socket.destroyed).toBe(false);

      // The steady request was kept: its body completes and it is answered (spaces are no JSON).
      stop.stopped = true;
      await sending;
      steady.socket.write(' '.repeat(SIZE - sent));
      expect(await answer(steady, 0)).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(p.slowFrom()).toEqual(['127.0.0.2']);
    } finally {
      stop.stopped = true;
    }
  });
});
