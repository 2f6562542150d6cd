import type net from 'node:net';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense, openDb } from '@svc/test-support/factories';
import { connectRaw, HANG_MS, type RawConnection } from './helpers/raw-connection.ts';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { blobObjects, blobTmp, multipart, postUpload, sessionDoc, sessionParts } from '@svc/test-support/upload';

/**
 * With real sockets: an upload must keep a minimum rate and arrive within
 * a total time, and a key has a bounded number of uploads in progress. Values are lowered by
 * configuration; every wait is for a condition, bounded (HANG_MS).
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + HANG_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`still waiting for ${what} after ${HANG_MS} ms`);
    await sleep(25);
  }
}

type Conn = RawConnection;

/** Every connection opened, destroyed at the end whatever happened (a hung one would hold the portal's shutdown). */
const opened = new Set<net.Socket>();

const connect = (url: string): Promise<Conn> => connectRaw(url, { track: opened });

/** Writes `bytes` `chunk` at a time every `everyMs` until done or the socket closes; bounded by the count. */
async function trickle(socket: net.Socket, bytes: Buffer, chunk: number, everyMs: number): Promise<void> {
  for (let i = 0; i < bytes.length && !socket.destroyed; i += chunk) {
    socket.write(bytes.subarray(i, i + chunk));
    await sleep(everyMs);
  }
}

/** An upload of `logBytes` of pipeline log, its headers written; the body is the caller's to send. */
async function startUpload(portal: TestPortal, key: string, logBytes: number) {
  const doc = sessionDoc('session-minimal.json');
  const mp = multipart([
    ...sessionParts(doc),
    { name: 'pipeline_log', filename: 'p.log', data: Buffer.alloc(logBytes, 'l') },
  ]);
  const c = await connect(portal.url);
  c.socket.write(
    `POST /api/upload HTTP/1.1\r\nHost: portal.test\r\nx-api-key: ${key}\r\nContent-Type: ${mp.contentType}\r\n` +
      `Content-Length: ${mp.body.length}\r\nConnection: close\r\n\r\n`,
  );
  return { c, body: mp.body, sessionId: doc['metadata']['session_id'] as string };
}

const bodyOf = (raw: string) => JSON.parse(raw.split('\r\n\r\n')[1] as string) as unknown;

describe('slow uploads', () => {
  const lines: string[] = [];
  let portal: TestPortal;
  let db: pg.Client;
  let key: string;
  beforeAll(async () => {
    portal = await startTestPortal({
      env: {
        SVC_UPLOAD_MIN_BYTES_PER_SECOND: '1000',
        SVC_UPLOAD_RATE_WINDOW_SECONDS: '1',
        SVC_UPLOAD_TIMEOUT_SECONDS: '3',
        SVC_LOG_LEVEL: 'info',
      },
      logDestination: { write: (line: string) => void lines.push(line) },
    });
    db = await openDb(portal);
    ({ key } = await createLicense(portal, { tier: 'professional' }));
  });
  afterAll(async () => {
    for (const s of opened) s.destroy();
    await db.end();
    await portal.close();
  });

  const stored = async (sessionId: string) =>
    (await db.query('SELECT count(*)::int AS n FROM sessions WHERE session_id = $1', [sessionId])).rows[0].n as number;
  const logged = () => lines.map((l) => JSON.parse(l) as { level: number; msg: string; [k: string]: unknown });

  it('a byte now and then, under the minimum rate, is cut with a 408 after the rate window; nothing is stored', async () => {
    const objectsBefore = await blobObjects(portal.dataDir);
    const { c, body, sessionId } = await startUpload(portal, key, 64 * 1024);
    // A byte every 100 ms: 10 bytes/s against 1000.
    void trickle(c.socket, body, 1, 100);
    await c.closed;
    expect(c.data()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(bodyOf(c.data())).toEqual({
      error: 'Request timeout: the upload arrived too slowly (less than 1000 bytes per second)',
    });
    await until('the refusal in the log', () => logged().some((e) => e.msg === 'upload too slow'));
    expect(logged().find((e) => e.msg === 'upload too slow')).toMatchObject({
      level: 30,
      reason: 'rate',
      min_bytes_per_second: 1000,
    });
    // Nothing of it is kept: no session, no file, nothing left in the temporary area.
    await until('the partial files to go', async () => (await blobTmp(portal.dataDir)).length === 0);
    expect(await stored(sessionId)).toBe(0);
    expect(await blobObjects(portal.dataDir)).toEqual(objectsBefore);
    // The cut is not reported as the client going away.
    expect(logged().filter((e) => e.msg === 'upload aborted by the client')).toEqual([]);
  });

  it('an upload above the minimum rate that goes on past SVC_UPLOAD_TIMEOUT_SECONDS gets a 408; nothing is stored', async () => {
    const objectsBefore = await blobObjects(portal.dataDir);
    // 4 KiB every 100 ms (about 40 kB/s, 40 times the minimum) of a 400 KiB log: about 10 s.
    const { c, body, sessionId } = await startUpload(portal, key, 400 * 1024);
    void trickle(c.socket, body, 4096, 100);
    await c.closed;
    expect(c.data()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(bodyOf(c.data())).toEqual({ error: 'Request timeout: the upload was not received within 3 seconds' });
    await until('the refusal in the log', () =>
      logged().some((e) => e.msg === 'upload too slow' && e['reason'] === 'total'),
    );
    await until('the partial files to go', async () => (await blobTmp(portal.dataDir)).length === 0);
    expect(await stored(sessionId)).toBe(0);
    expect(await blobObjects(portal.dataDir)).toEqual(objectsBefore);
  });

  it('an upload sent at once is unaffected', async () => {
    const doc = sessionDoc('session-minimal.json');
    const res = await postUpload(portal.url, key, sessionParts(doc));
    expect(res.status).toBe(200);
    expect(await stored(doc['metadata']['session_id'] as string)).toBe(1);
  });
});

describe('uploads in progress per key', () => {
  let portal: TestPortal;
  beforeAll(async () => {
    portal = await startTestPortal({ env: { SVC_UPLOADS_PER_KEY: '1' } });
  });
  afterAll(async () => {
    for (const s of opened) s.destroy();
    await portal.close();
  });

  it('past SVC_UPLOADS_PER_KEY a key gets 429 with Retry-After; other keys are served; the slot comes back', async () => {
    const { key } = await createLicense(portal, { tier: 'business' });
    const { key: otherKey } = await createLicense(portal, { tier: 'business' });
    const first = await startUpload(portal, key, 256 * 1024);
    // All but the last bytes; once part of the log is on disk, the upload is in progress.
    first.c.socket.write(first.body.subarray(0, first.body.length - 100));
    await until('the first upload to be in progress', async () => (await blobTmp(portal.dataDir)).length > 0);

    const refused = await postUpload(portal.url, key, sessionParts(sessionDoc('session-minimal.json')));
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('30');
    expect(refused.body).toEqual({ error: 'Too many uploads in progress for this key (1), try again later' });

    const other = await postUpload(portal.url, otherKey, sessionParts(sessionDoc('session-minimal.json')));
    expect(other.status).toBe(200);

    first.c.socket.write(first.body.subarray(first.body.length - 100));
    await first.c.closed;
    expect(first.c.data()).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(bodyOf(first.c.data())).toMatchObject({ success: true, session_id: first.sessionId });

    // The first upload's slot is free once its answer is out.
    let again = 0;
    for (let i = 0; i < 40 && again !== 200; i++) {
      again = (await postUpload(portal.url, key, sessionParts(sessionDoc('session-minimal.json')))).status;
      if (again !== 200) await sleep(25);
    }
    expect(again).toBe(200);
  });
});
