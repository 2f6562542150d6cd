import type net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addressKey } from '../src/http/connections.ts';
import { connectRaw, type RawConnection } from './helpers/raw-connection.ts';
import { LEGACY_KEY, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { multipart, sessionDoc, sessionParts } from '@svc/test-support/upload';

/**
 * With real sockets: a body that stops, headers
 * that trickle, a body that trickles past the request timeout, an upload that trickles past
 * it (allowed), the keep-alive timeout, connections per address and the global cap. Timeouts are lowered by configuration to keep the test short; every
 * wait is bounded (a socket that is never closed fails the test at HANG_MS).
 */

type Conn = RawConnection;
const connect = (url: string, from?: string): Promise<Conn> => connectRaw(url, from === undefined ? {} : { from });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Write `bytes` one chunk every `everyMs` until done or the socket closes; bounded by the count. */
async function trickle(socket: net.Socket, bytes: Buffer, chunk: number, everyMs: number): Promise<void> {
  for (let i = 0; i < bytes.length && !socket.destroyed; i += chunk) {
    socket.write(bytes.subarray(i, i + chunk));
    await sleep(everyMs);
  }
}

describe('timeouts', () => {
  let portal: TestPortal;
  beforeAll(async () => {
    portal = await startTestPortal({
      env: { SVC_BODY_IDLE_TIMEOUT_SECONDS: '1', SVC_HEADERS_TIMEOUT_SECONDS: '2', SVC_REQUEST_TIMEOUT_SECONDS: '2' },
    });
  });
  afterAll(() => portal.close());

  it('an unauthenticated POST /identity/token with Content-Length: 100 and no body is closed after the idle timeout', async () => {
    const c = await connect(portal.url);
    c.socket.write(
      'POST /identity/token HTTP/1.1\r\nHost: portal.test\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n',
    );
    await c.closed;
    // No answer is owed to a request that never arrived.
    expect(c.data()).not.toMatch(/^HTTP\/1\.1 [25]/);
  });

  it('headers sent a byte at a time are cut after the headers timeout', async () => {
    const c = await connect(portal.url);
    c.socket.write('GET /api/health HTTP/1.1\r\nHost: portal.test\r\n');
    // Each byte comes well within the idle timeout; only the headers timeout can end this.
    void trickle(c.socket, Buffer.from(`X-Slow: ${'a'.repeat(200)}`), 1, 250);
    await c.closed;
    expect(c.data()).toMatch(/^(HTTP\/1\.1 408|)/);
    expect(c.data()).not.toMatch(/^HTTP\/1\.1 200/);
  });

  it('a JSON body sent a byte at a time gets a 408 after the request timeout', async () => {
    const c = await connect(portal.url);
    c.socket.write(
      'POST /identity/token HTTP/1.1\r\nHost: portal.test\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n',
    );
    void trickle(c.socket, Buffer.from(' '.repeat(100)), 1, 250);
    await c.closed;
    expect(c.data()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(c.data().split('\r\n\r\n')[1]).toBe('{"error":"Request timeout: the request was not received in time"}');
  });

  it('a normal request on the same portal is unaffected', async () => {
    const res = await fetch(`${portal.url}/api/health`);
    expect(res.status).toBe(200);
  });
});

describe('an upload past the request timeout', () => {
  let portal: TestPortal;
  beforeAll(async () => {
    portal = await startTestPortal({
      env: { SVC_BODY_IDLE_TIMEOUT_SECONDS: '10', SVC_REQUEST_TIMEOUT_SECONDS: '1' },
    });
  });
  afterAll(() => portal.close());

  it('an upload that keeps arriving steadily past the request timeout succeeds', async () => {
    const doc = sessionDoc('session-minimal.json');
    const mp = multipart([
      ...sessionParts(doc),
      { name: 'pipeline_log', filename: 'p.log', data: Buffer.alloc(64 * 1024, 'l') },
    ]);
    const c = await connect(portal.url);
    c.socket.write(
      `POST /api/upload HTTP/1.1\r\nHost: portal.test\r\nx-api-key: ${LEGACY_KEY}\r\nContent-Type: ${mp.contentType}\r\nContent-Length: ${mp.body.length}\r\nConnection: close\r\n\r\n`,
    );
    // 16 chunks, one every 250 ms: about 4 s in all, four times the request timeout, never
    // idle for anywhere near the idle timeout (a loaded machine delays the chunks).
    await trickle(c.socket, mp.body, Math.ceil(mp.body.length / 16), 250);
    await c.closed;
    expect(c.data()).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(JSON.parse(c.data().split('\r\n\r\n')[1] as string)).toMatchObject({
      success: true,
      session_id: doc['metadata']['session_id'],
    });
  });
});

/** One GET /api/health on an open connection; the answer (bounded wait). */
async function get(c: Conn): Promise<string> {
  const before = c.data().length;
  c.socket.write('GET /api/health HTTP/1.1\r\nHost: portal.test\r\n\r\n');
  for (let i = 0; i < 400 && !c.socket.destroyed && !/\r\n\r\n[\s\S]*}/.test(c.data().slice(before)); i++)
    await sleep(25);
  return c.data().slice(before);
}

/**
 * Starts a request whose body never comes, so the connection is busy: the portal has the
 * request (its `100 Continue` says so) and waits for the body.
 */
async function busy(c: Conn): Promise<void> {
  const before = c.data().length;
  c.socket.write(
    'POST /identity/token HTTP/1.1\r\nHost: portal.test\r\nContent-Type: application/json\r\n' +
      'Content-Length: 100\r\nExpect: 100-continue\r\n\r\n',
  );
  for (let i = 0; i < 400 && !c.data().slice(before).includes('\r\n\r\n'); i++) await sleep(25);
  expect(c.data().slice(before)).toBe('HTTP/1.1 100 Continue\r\n\r\n');
}

/** Sends the body `busy` held back; the answer that follows the 100 Continue (bounded wait). */
async function finish(c: Conn): Promise<string> {
  const before = c.data().length;
  c.socket.write(' '.repeat(100));
  for (let i = 0; i < 400 && !/\r\n\r\n[\s\S]*}/.test(c.data().slice(before)); i++) await sleep(25);
  return c.data().slice(before);
}

describe('the address a connection counts against', () => {
  it.each([
    ['127.0.0.2', '127.0.0.2'],
    ['::ffff:10.1.2.3', '10.1.2.3'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::ffff', '2001:db8:1:2::/64'],
    ['::1', '0:0:0:0::/64'],
    [undefined, 'unknown'],
  ])('%s counts as %s', (remote, key) => expect(addressKey(remote)).toBe(key));
});

const OK = /^HTTP\/1\.1 200 OK\r\n/;
/** What a busy connection's request gets once its body arrives: it was kept, not closed. */
const KEPT = /^HTTP\/1\.1 400 Bad Request\r\n/;

describe('the keep-alive timeout', () => {
  let portal: TestPortal;
  beforeAll(async () => {
    portal = await startTestPortal({ env: { SVC_KEEP_ALIVE_TIMEOUT_SECONDS: '1' } });
  });
  afterAll(() => portal.close());

  it('an idle keep-alive connection is closed after SVC_KEEP_ALIVE_TIMEOUT_SECONDS, as announced', async () => {
    const c = await connect(portal.url);
    const answer = await get(c);
    expect(answer).toMatch(OK);
    expect(answer).toMatch(/\r\nKeep-Alive: timeout=1\r\n/i);
    await c.closed;
    // Nothing else was sent: the connection simply ended.
    expect(c.data()).toBe(answer);
  });
});

describe('connections per address and the global cap', () => {
  let portal: TestPortal;
  const open: Conn[] = [];
  const conn = async (from: string) => {
    const c = await connect(portal.url, from);
    open.push(c);
    return c;
  };
  // The portal's side of each connection, to wait until the portal has let go of them all.
  const serverSide = new Set<net.Socket>();
  const lines: string[] = [];
  beforeAll(async () => {
    portal = await startTestPortal({
      env: {
        SVC_MAX_CONNECTIONS: '4',
        SVC_MAX_CONNECTIONS_PER_ADDRESS: '2',
        SVC_KEEP_ALIVE_TIMEOUT_SECONDS: '30',
        // The busy requests below wait for bodies that never come; within their first rate
        // window they are not slow (connection-slow.slow.test.ts has the slow ones).
        SVC_SLOW_REQUEST_WINDOW_SECONDS: '3600',
        SVC_LOG_LEVEL: 'warn',
      },
      logDestination: { write: (line: string) => void lines.push(line) },
    });
    portal.app.server.on('connection', (s: net.Socket) => {
      serverSide.add(s);
      s.once('close', () => serverSide.delete(s));
    });
  });
  afterEach(async () => {
    for (const c of open.splice(0)) {
      c.socket.destroy();
      await c.closed;
    }
    for (let i = 0; i < 400 && serverSide.size > 0; i++) await sleep(25);
    expect(serverSide.size).toBe(0);
  });
  afterAll(() => portal.close());

  it("announces the default keep-alive timeout, not Fastify's 72 s", async () => {
    const other = await startTestPortal();
    try {
      const c = await connect(other.url);
      expect(await get(c)).toMatch(/\r\nKeep-Alive: timeout=5\r\n/i);
      c.socket.destroy();
      await c.closed;
    } finally {
      await other.close();
    }
  });

  it('one address holding its limit of busy connections cannot starve another', async () => {
    const a = [await conn('127.0.0.2'), await conn('127.0.0.2')];
    for (const c of a) await busy(c);
    // Every further connection from that address is closed at once, unanswered.
    for (let i = 0; i < 5; i++) {
      const extra = await conn('127.0.0.2');
      extra.socket.write('GET /api/health HTTP/1.1\r\nHost: portal.test\r\n\r\n');
      await extra.closed;
      expect(extra.data()).toBe('');
    }
    // Other addresses are served.
    expect(await get(await conn('127.0.0.3'))).toMatch(OK);
    expect(await get(await conn('127.0.0.1'))).toMatch(OK);
    // The busy ones were kept.
    for (const c of a) expect(await finish(c)).toMatch(KEPT);
    // Refusals are logged, at most one line per 10 s.
    const refusals = lines
      .map((l) => JSON.parse(l) as { level: number; msg: string; address?: string })
      .filter((e) => e.msg === 'connection refused: too many open connections from one address');
    expect(refusals).toMatchObject([{ level: 40, address: '127.0.0.2' }]);
  });

  it('an address past its limit closes its own longest-idle connection for the new one', async () => {
    const [first, second] = [await conn('127.0.0.2'), await conn('127.0.0.2')];
    expect(await get(first as Conn)).toMatch(OK);
    expect(await get(second as Conn)).toMatch(OK);
    const third = await conn('127.0.0.2');
    expect(await get(third)).toMatch(OK);
    await first?.closed;
    expect(await get(second as Conn)).toMatch(OK);
  });

  it('at the global cap the longest-idle keep-alive connection makes room; when all are busy the newcomer is closed', async () => {
    const a = [await conn('127.0.0.2'), await conn('127.0.0.2')];
    for (const c of a) await busy(c);
    const [b1, b2] = [await conn('127.0.0.3'), await conn('127.0.0.3')] as [Conn, Conn];
    expect(await get(b1)).toMatch(OK);
    expect(await get(b2)).toMatch(OK);

    // Four open, two of them idle: a newcomer from a third address is served, b1 (idle longest) goes.
    const c1 = await conn('127.0.0.4');
    expect(await get(c1)).toMatch(OK);
    await b1.closed;
    expect(b1.data()).not.toMatch(/\r\n\r\n[\s\S]*}[\s\S]*HTTP/);

    // Now every connection is busy: the newcomer is the one closed.
    await busy(b2);
    await busy(c1);
    const d = await conn('127.0.0.5');
    d.socket.write('GET /api/health HTTP/1.1\r\nHost: portal.test\r\n\r\n');
    await d.closed;
    expect(d.data()).toBe('');
    for (const c of [...a, c1]) expect(await finish(c)).toMatch(KEPT);

    // Those that were answered are idle again: a newcomer takes one's place.
    expect(await get(await conn('127.0.0.5'))).toMatch(OK);
  });
});
