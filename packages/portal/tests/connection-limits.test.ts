import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEGACY_KEY, startTestPortal, type TestPortal } from './helpers/portal.ts';
import { multipart, sessionDoc, sessionParts } from './helpers/upload.ts';

/**
 * Issue 11, point 9, with real sockets: a body that stops, headers that trickle, a body
 * that trickles past the request timeout, an upload that trickles past it (allowed), and
 * the connection cap. Timeouts are lowered by configuration to keep the test short; every
 * wait is bounded (a socket that is never closed fails the test at HANG_MS).
 */

const HANG_MS = 15_000;

interface Conn {
  socket: net.Socket;
  /** Everything received. */
  data(): string;
  /** Resolves when the server has closed the connection (or rejects after HANG_MS). */
  closed: Promise<void>;
}

async function connect(url: string): Promise<Conn> {
  const socket = net.connect(Number(new URL(url).port), '127.0.0.1');
  let received = '';
  socket.on('data', (d) => (received += d.toString('latin1')));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`connection still open after ${HANG_MS} ms`)), HANG_MS);
    socket.once('close', () => {
      clearTimeout(t);
      resolve();
    });
  });
  closed.catch(() => undefined);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return { socket, data: () => received, closed };
}

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
    // 16 chunks, one every 250 ms: about 4 s in all, twice the request timeout, never idle for 1 s.
    await trickle(c.socket, mp.body, Math.ceil(mp.body.length / 16), 250);
    await c.closed;
    expect(c.data()).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(JSON.parse(c.data().split('\r\n\r\n')[1] as string)).toMatchObject({
      success: true,
      session_id: doc['metadata']['session_id'],
    });
  });

  it('a normal request on the same portal is unaffected', async () => {
    const res = await fetch(`${portal.url}/api/health`);
    expect(res.status).toBe(200);
  });
});

describe('the connection cap', () => {
  let portal: TestPortal;
  beforeAll(async () => {
    portal = await startTestPortal({ env: { SVC_MAX_CONNECTIONS: '3' } });
  });
  afterAll(() => portal.close());

  const get = async (c: Conn) => {
    const before = c.data().length;
    c.socket.write('GET /api/health HTTP/1.1\r\nHost: portal.test\r\n\r\n');
    for (let i = 0; i < 200 && !/\r\n\r\n[\s\S]*}/.test(c.data().slice(before)); i++) await sleep(25);
    return c.data().slice(before);
  };

  it('closes connections past the cap at once while the open ones keep working', async () => {
    const open = await Promise.all([connect(portal.url), connect(portal.url), connect(portal.url)]);
    for (const c of open) expect(await get(c)).toMatch(/^HTTP\/1\.1 200 OK\r\n/);

    const extra = await connect(portal.url);
    extra.socket.write('GET /api/health HTTP/1.1\r\nHost: portal.test\r\n\r\n');
    await extra.closed;
    expect(extra.data()).toBe('');

    for (const c of open) expect(await get(c)).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    for (const c of open) c.socket.destroy();
    await Promise.all(open.map((c) => c.closed));

    // Once they are gone, new connections are accepted again.
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = await fetch(`${portal.url}/api/health`).then(
        (r) => r.status,
        () => 0,
      );
      if (status !== 200) await sleep(50);
    }
    expect(status).toBe(200);
  });
});
