import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLicense } from '@svc/test-support/factories';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { blobTmp, multipart, sessionDoc, sessionParts } from '@svc/test-support/upload';

/** A client that goes away mid-upload is logged as such, not as a database outage. */

/** Bounds a wait for a condition (a hang guard, not a pace). */
const WAIT = { timeout: 30_000, interval: 20 };

describe('a client aborting an upload', () => {
  const lines: string[] = [];
  let portal: TestPortal;
  beforeAll(async () => {
    portal = await startTestPortal({
      // Every request's access line: the /readyz one below bounds the window.
      env: { SVC_LOG_LEVEL: 'info', SVC_ACCESS_LOG: 'all' },
      logDestination: { write: (line: string) => void lines.push(line) },
    });
  });
  afterAll(() => portal.close());

  it('is logged once as a client abort at info level, without an error stack', async () => {
    const mp = multipart([
      ...sessionParts(sessionDoc('session-minimal.json')),
      { name: 'pipeline_log', filename: 'p.log', data: Buffer.alloc(2 * 1024 * 1024, 'x') },
    ]);
    // A license key: the legacy key is logged at warning level on every use (docs/api.md#credentials).
    const { key } = await createLicense(portal, { tier: 'business' });
    const port = Number(new URL(portal.url).port);
    const socket = net.connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /api/upload HTTP/1.1\r\nHost: portal.test\r\nx-api-key: ${key}\r\nContent-Type: ${mp.contentType}\r\nContent-Length: ${mp.body.length}\r\n\r\n`,
    );
    // Half the body, then the client goes away: once the portal is storing the log part (its
    // temporary file exists), so the upload is cut mid-body, not before the handler runs.
    await new Promise<void>((resolve) => socket.write(mp.body.subarray(0, mp.body.length / 2), () => resolve()));
    await vi.waitFor(async () => expect(await blobTmp(portal.dataDir)).toHaveLength(1), WAIT);
    socket.destroy();

    await vi.waitFor(() => expect(lines.some((l) => /upload aborted by the client/.test(l))).toBe(true), WAIT);
    // Anything the aborted request still logs comes before the portal has served a request
    // sent after the abort line: its "request completed" bounds the window.
    expect((await fetch(`${portal.url}/readyz`)).status).toBe(200);
    await vi.waitFor(() => {
      const ready = lines.find((l) => l.includes('"url":"/readyz"'));
      const reqId = ready === undefined ? undefined : (JSON.parse(ready) as { reqId: string }).reqId;
      expect(lines.some((l) => l.includes(`"reqId":"${reqId}"`) && l.includes('"msg":"request completed"'))).toBe(true);
    }, WAIT);

    const entries = lines.map((l) => JSON.parse(l) as { level: number; msg: string; err?: unknown });
    const aborts = entries.filter((e) => e.msg === 'upload aborted by the client');
    expect(aborts).toHaveLength(1);
    expect(aborts[0]?.level).toBe(30);
    expect(aborts[0]?.err).toBeUndefined();
    expect(entries.filter((e) => e.msg === 'database unavailable')).toEqual([]);
    expect(entries.filter((e) => e.level >= 40)).toEqual([]);
    // Nothing of the half-sent upload stays in the blob store's temporary area.
    expect(await blobTmp(portal.dataDir)).toEqual([]);
  });
});
