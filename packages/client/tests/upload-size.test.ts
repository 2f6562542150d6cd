import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { uploadNotSentMessage, UPLOAD_LIMIT_BYTES } from '@svc/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPortalClient } from '../src/kit/portal/client.ts';
import { PortalError } from '../src/kit/portal/errors.ts';
import type { PortalTarget } from '../src/kit/portal/target.ts';
import { uploadTimeoutMs } from '../src/kit/portal/upload-size.ts';
import { type RecordingServer, startRecordingServer } from './helpers/recording-server.ts';

/**
 * The portal client measures an upload exactly as it would send it (multipart
 * framing included) and refuses one over the limit before sending a byte, against a real
 * node:http server on 127.0.0.1 that records what reaches it.
 */

let server: RecordingServer;
let work: string;
const files = { session: '', log: '' };

beforeAll(async () => {
  server = await startRecordingServer();
  server.handle((_req, _body, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        success: true,
        session_id: 's1',
        share_token: null,
        share_url: null,
        message: 'Session uploaded',
      }),
    );
  });
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'upload-size-'));
  files.session = path.join(work, 'session_results.json');
  files.log = path.join(work, 'pipeline.log');
  await fs.writeFile(files.session, JSON.stringify({ metadata: { session_id: 's1' } }));
  await fs.writeFile(files.log, Buffer.alloc(300 * 1024, 'x'));
});
afterAll(async () => {
  await server?.close();
  await fs.rm(work, { recursive: true, force: true });
});

const target = (uploadLimitBytes?: number): PortalTarget => ({
  uploadUrl: `${server.base}/api/upload`,
  apiKey: `svc_biz_${'ab'.repeat(32)}`,
  jwt: null,
  timeoutS: 5,
  ...(uploadLimitBytes === undefined ? {} : { uploadLimitBytes }),
});

describe('the upload limit, checked before sending', () => {
  it('a request of exactly the limit is sent; one byte over is refused with the limit named, nothing sent', async () => {
    // The length the client sends, as the server received it.
    await createPortalClient({ target: target() }).upload(files);
    const sent = Number(server.seen.at(-1)?.headers['content-length']);
    expect(sent).toBe(server.seen.at(-1)?.body.length);
    expect(sent).toBeGreaterThan(300 * 1024);

    const before = server.seen.length;
    await createPortalClient({ target: target(sent) }).upload(files);
    expect(server.seen.length).toBe(before + 1);

    const err = await createPortalClient({ target: target(sent - 1) })
      .upload(files)
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(PortalError);
    expect([(err as PortalError).kind, (err as PortalError).message, (err as PortalError).details]).toEqual([
      'too_large',
      uploadNotSentMessage(sent, sent - 1),
      { limit_bytes: sent - 1, body_bytes: sent },
    ]);
    expect(server.seen.length).toBe(before + 1);
  });

  it("without a setting the limit is the protocol's 25 MB", async () => {
    const big = path.join(work, 'big.log');
    await fs.writeFile(big, Buffer.alloc(UPLOAD_LIMIT_BYTES, 'x'));
    const before = server.seen.length;
    const err = await createPortalClient({ target: target() })
      .upload({ session: files.session, log: big })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect((err as PortalError).kind).toBe('too_large');
    expect((err as PortalError).details?.['limit_bytes']).toBe(UPLOAD_LIMIT_BYTES);
    expect(server.seen.length).toBe(before);
  });
});

describe('uploadTimeoutMs', () => {
  it("an upload's answer may come later than the call timeout: the portal is still storing it", async () => {
    const answer = (res: import('node:http').ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ success: true, session_id: 's1', share_token: null, share_url: null, message: 'ok' }));
    };
    // Answered half a second after the 1 s timeout a small call has; a 300 KB upload has 4 s more.
    server.handle((_req, _body, res) => void setTimeout(() => answer(res), 1500));
    try {
      const client = createPortalClient({ target: { ...target(), timeoutS: 1 } });
      expect((await client.upload(files)).session_id).toBe('s1');
    } finally {
      server.handle((_req, _body, res) => answer(res));
    }
  });

  it('adds ten seconds per MB of body to the call timeout', () => {
    expect(uploadTimeoutMs(30_000, 0)).toBe(30_000);
    expect(uploadTimeoutMs(30_000, 1024 * 1024)).toBe(40_000);
    expect(uploadTimeoutMs(30_000, UPLOAD_LIMIT_BYTES)).toBe(280_000);
  });
});
