import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createLicense } from '@svc/test-support/factories';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { newSessionId } from '@svc/test-support/upload';
import { until } from '@svc/test-support/wait';
import { type S3Peer, startS3Peer } from './helpers/s3-peer.ts';

/**
 * A handler outlives its client when the client goes away mid-request: an upload then removes
 * the files it staged. The portal's close() waits for such handlers too, so nothing the portal
 * does touches the store, the data directory or the pool after close() returned (a test
 * removing the data directory then failed with ENOTEMPTY while the upload's files were written).
 */

let peer: S3Peer | null = null;
let portal: TestPortal | null = null;
afterEach(async () => {
  await portal?.close();
  if (portal) await fs.rm(portal.dataDir, { recursive: true, force: true });
  await peer?.close();
  portal = null;
  peer = null;
});

const STORE_ERROR =
  '<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>held</Message></Error>';

/** Resolves once nothing accepts connections on `port` any more. */
async function refusing(port: number): Promise<void> {
  await until(
    () =>
      new Promise<boolean>((resolve) => {
        const s = net.connect(port, '127.0.0.1');
        s.once('connect', () => {
          s.destroy();
          resolve(false);
        });
        s.once('error', () => resolve(true));
      }),
    20_000,
    () => `port ${port} to refuse connections`,
  );
}

describe('close() and a handler whose client went away', () => {
  it('returns only after the handler has finished: an aborted upload removing what it staged', async () => {
    peer = await startS3Peer();
    // The portal's removal of the staged file is held at the store until the test lets it go,
    // then refused, so the handler's end shows as its warning.
    const held: ServerResponse[] = [];
    let released = false;
    const refuse = (res: ServerResponse) => {
      res.writeHead(500, { 'content-type': 'application/xml' });
      res.end(STORE_ERROR);
    };
    peer.refuse = (req, res) => {
      if (req.method !== 'POST' || !/[?&]delete/.test(req.url ?? '')) return false;
      req.resume();
      if (released) refuse(res);
      else held.push(res);
      return true;
    };
    const prefix = `p-${randomBytes(4).toString('hex')}`;
    const lines: string[] = [];
    portal = await startTestPortal({
      env: { ...peer.env(prefix), SVC_LOG_LEVEL: 'warn' },
      logDestination: { write: (line: string) => void lines.push(line) },
    });
    const warned = () =>
      lines.some((l) => (JSON.parse(l) as { msg: string }).msg === 'could not remove files of a failed upload');
    const { key } = await createLicense(portal);
    const port = Number(new URL(portal.url).port);

    // A whole report.html part, then the start of session_json, then the client goes away.
    const socket = net.connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.on('error', () => undefined);
    const boundary = 'b0undary';
    socket.write(
      `POST /api/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: ${key}\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 100000\r\n\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="report_html"; filename="report.html"\r\n` +
        `Content-Type: text/html\r\n\r\n<html><body>report</body></html>\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="session_json"; filename="session_results.json"\r\n` +
        `Content-Type: application/json\r\n\r\n{"metadata":{"session_id":"${newSessionId()}"`,
    );
    const stored = async () => (await (peer as S3Peer).objects(prefix)).length === 1;
    await until(stored, 20_000, () => 'report.html to be stored');
    socket.destroy();
    await until(
      () => held.length > 0,
      20_000,
      () => 'the removal of the staged file',
    );

    const closing = portal.close();
    let closed = false;
    void closing.then(() => {
      closed = true;
    });
    // The server stops listening first; the handler is still held at the store.
    await Promise.race([closing, refusing(port)]);
    expect({ closed, warned: warned() }).toEqual({ closed: false, warned: false });
    released = true;
    for (const res of held.splice(0)) refuse(res);
    await closing;
    expect(warned()).toBe(true);
    // The refused removal leaves the file for the orphan sweep.
    expect(await peer.objects(prefix)).toHaveLength(1);
  });
});
