import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense, type LicenseFixture } from '@svc/test-support/factories';
import { http, withKey } from '@svc/test-support/http';
import { deadAddress } from '@svc/test-support/ports';
import { createTestDatabase, LEGACY_KEY, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { blobObjects, blobTmp, newSessionId, postUpload, rawRequest, sessionParts } from '@svc/test-support/upload';
import {
  killAll,
  makeDataDir,
  spawnPortal,
  startPortalProcess,
  stopProcess,
  waitForExit,
} from '@svc/test-support/portal-process';
import { S3BlobStore } from '../src/blobs/s3-store.ts';
import { ORPHAN_GRACE_MS } from '../src/blobs/store.ts';
import { sweepOrphanedFiles } from '../src/sessions/sweep.ts';
import { type S3Peer, startS3Peer } from './helpers/s3-peer.ts';

/**
 * A portal whose session files live in an S3-compatible bucket (SVC_BLOB_URL,
 * docs/s3-storage.md), against a real S3 protocol peer: upload, download, share
 * page and refresh stream through it; a store failing mid-upload or down answers 503 and
 * commits nothing; the portal recovers by itself when the store is back.
 */

const UNAVAILABLE = { error: 'Session storage is unavailable, try again shortly' };
/** Over one 5 MiB part: the report goes up as a multipart upload. */
const bigReport = (fill: string) =>
  `<!doctype html><html><body><h1>${fill}</h1><pre>${fill.repeat(Math.ceil((6 * 1024 * 1024) / fill.length))}</pre></body></html>`;

let peer: S3Peer;
let portal: TestPortal;
let key: LicenseFixture;
const prefix = `portal-${randomBytes(4).toString('hex')}`;

const bucketObjects = async () => (await peer.objects(`${prefix}/`)).map((k) => k.slice(prefix.length + 1));

async function upload(sessionId: string, report: string) {
  return postUpload(portal.url, key.key, sessionParts(sessionJson(sessionId), { log: 'stage ok\n', report }));
}
const sessionJson = (sessionId: string) => ({
  metadata: { session_id: sessionId, client: 'Acme', target: '10.1.0.0/24' },
  summary: { risk_score: 42, risk_grade: 'C', total_findings: 2, total_hosts: 1 },
});
const download = (sessionId: string, file: string) =>
  http(portal.url, 'GET', `/api/download?session=${sessionId}&file=${file}`, { headers: withKey(key.key) });
const refresh = (sessionId: string, body: string) =>
  rawRequest(`${portal.url}/api/refresh?session=${sessionId}&file=report.html`, {
    method: 'PUT',
    headers: { 'content-type': 'text/html', ...withKey(key.key) },
    body: Buffer.from(body),
  });
const sharePage = (token: string) => http(portal.url, 'GET', `/share/?token=${token}`);
/** The report in the share page's frame, with the portal's bridge script. */
const shareFrame = (token: string) => http(portal.url, 'GET', `/share/frame?token=${token}&file=report.html`);
const sessionStatus = async (sessionId: string) =>
  (
    await http(portal.url, 'GET', `/api/sessions?session=${sessionId}`, {
      headers: { 'x-identity-token': await portal.adminToken() },
    })
  ).status;

beforeAll(async () => {
  peer = await startS3Peer();
  portal = await startTestPortal({ env: peer.env(prefix) });
  key = await createLicense(portal, { tier: 'professional' });
});
afterAll(async () => {
  await portal?.close();
  if (portal) await fs.rm(portal.dataDir, { recursive: true, force: true });
  await peer?.close();
});

describe('S3-compatible session storage', () => {
  it('an upload lands in the bucket (nothing under the data directory); download, share page and refresh stream from it', async () => {
    const sessionId = newSessionId();
    const report = bigReport('first version');
    const res = await upload(sessionId, report);
    expect(res.status).toBe(200);
    const stored = await bucketObjects();
    expect(stored).toHaveLength(3);
    expect(await blobObjects(portal.dataDir)).toStrictEqual([]);
    expect(await blobTmp(portal.dataDir)).toStrictEqual([]);

    const got = await download(sessionId, 'report.html');
    expect(got.status).toBe(200);
    expect(got.text === report).toBe(true);
    const json = await download(sessionId, 'session_results.json');
    expect(json.body.metadata.session_id).toBe(sessionId);

    const page = await sharePage(res.body.share_token);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`src="frame?token=${res.body.share_token}&amp;file=report.html"`);
    const framed = await shareFrame(res.body.share_token);
    expect(framed.status).toBe(200);
    expect(framed.text.startsWith('<!doctype html><html><body><h1>first version</h1>')).toBe(true);
    // The stored report with the bridge script inserted at its last closing body tag.
    expect(framed.text.length).toBeGreaterThan(report.length);
    expect(framed.text.endsWith('</body></html>')).toBe(true);

    const v2 = bigReport('second version');
    expect((await refresh(sessionId, v2)).status).toBe(200);
    expect((await download(sessionId, 'report.html')).text === v2).toBe(true);
    // The replaced object is gone: still three files, one of them new.
    const after = await bucketObjects();
    expect(after).toHaveLength(3);
    expect(after.filter((k) => !stored.includes(k))).toHaveLength(1);
  });

  it('a store refusing a part mid-upload: 503 in the error shape, no session, no object, no unfinished upload', async () => {
    const before = await bucketObjects();
    peer.refuse = (req, res) => {
      if (req.method !== 'PUT' || !/[?&]partNumber=2(&|$)/.test(req.url ?? '')) return false;
      req.resume();
      res.writeHead(500, { 'content-type': 'application/xml' }).end('<Error><Code>InternalError</Code></Error>');
      return true;
    };
    const sessionId = newSessionId();
    try {
      const res = await upload(sessionId, bigReport('x').repeat(2));
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.body).toStrictEqual(UNAVAILABLE);
    } finally {
      peer.refuse = null;
    }
    expect(await sessionStatus(sessionId)).toBe(404);
    expect(await bucketObjects()).toStrictEqual(before);
    expect(await peer.unfinishedUploads()).toStrictEqual([]);
  });

  it("the store going away while it receives a part: 503, no session, no object; what it kept is the sweep's", async () => {
    const before = await bucketObjects();
    const uploadsBefore = await peer.unfinishedUploads();
    peer.refuse = (req) => {
      if (req.method !== 'PUT' || !/[?&]partNumber=2(&|$)/.test(req.url ?? '')) return false;
      // Gone mid-request: this connection and every later one is reset.
      peer.refuse = null;
      void peer.stop();
      return true;
    };
    const sessionId = newSessionId();
    try {
      const res = await upload(sessionId, bigReport('y').repeat(2));
      expect({ status: res.status, body: res.body }).toStrictEqual({ status: 503, body: UNAVAILABLE });
    } finally {
      peer.refuse = null;
      await peer.start();
    }
    expect(await sessionStatus(sessionId)).toBe(404);
    // What the dead store kept: the log stored before the report (its delete met the dead
    // store) and the report's upload (its abort too): orphans no row references.
    expect((await bucketObjects()).filter((k) => !before.includes(k))).toHaveLength(1);
    expect((await peer.unfinishedUploads()).filter((k) => !uploadsBefore.includes(k))).toHaveLength(1);
    // The portal's sweep, once they are past the grace period, removes both and nothing else.
    const later = new S3BlobStore(peer.settings(prefix), { now: () => Date.now() + 2 * ORPHAN_GRACE_MS });
    try {
      await sweepOrphanedFiles(portal.ctx.db, later);
    } finally {
      later.close();
    }
    expect(await bucketObjects()).toStrictEqual(before);
    expect(await peer.unfinishedUploads()).toStrictEqual(uploadsBefore);
  });

  it("the store down: upload, download, the share page's report and refresh answer 503; back on its port, the same portal works again", async () => {
    const sessionId = newSessionId();
    const report = '<!doctype html><html><body>before the outage</body></html>';
    const first = await upload(sessionId, report);
    expect(first.status).toBe(200);
    await peer.stop();
    try {
      const during = newSessionId();
      const up = await upload(during, report);
      expect({ status: up.status, body: up.body }).toStrictEqual({ status: 503, body: UNAVAILABLE });
      for (const res of [
        await download(sessionId, 'report.html'),
        await shareFrame(first.body.share_token),
        await http(
          portal.url,
          'GET',
          `/api/download?session=${sessionId}&file=report.html&token=${first.body.share_token}`,
        ),
      ]) {
        expect({ status: res.status, body: res.body }).toStrictEqual({ status: 503, body: UNAVAILABLE });
        expect(res.headers.get('retry-after')).toBe('5');
      }
      const re = await refresh(sessionId, '<p>during</p>');
      expect({ status: re.status, body: re.body }).toStrictEqual({ status: 503, body: UNAVAILABLE });
      expect(await sessionStatus(during)).toBe(404);
    } finally {
      await peer.start();
    }
    // No restart of the portal: the next requests simply work.
    expect((await download(sessionId, 'report.html')).text).toBe(report);
    expect((await shareFrame(first.body.share_token)).text).toContain('before the outage');
    const later = newSessionId();
    expect((await upload(later, report)).status).toBe(200);
    expect((await download(later, 'report.html')).text).toBe(report);
  });
});

describe('a portal process started with SVC_BLOB_URL', () => {
  afterAll(() => killAll());
  const processEnv = async (blobEnv: Record<string, string>) => ({
    DATABASE_URL: await createTestDatabase({ migrated: true }),
    SVC_UPLOAD_API_KEY: LEGACY_KEY,
    SVC_LOG_LEVEL: 'info',
    ...blobEnv,
  });

  it('uploads a session into the bucket, downloads it byte for byte and opens its share page', async () => {
    const processPrefix = `proc-${randomBytes(4).toString('hex')}`;
    const dataDir = await makeDataDir('svc-s3-');
    const p = await startPortalProcess({ dataDir, env: await processEnv(peer.env(processPrefix)) });
    const sessionId = newSessionId();
    const report = bigReport('from a process');
    const doc = sessionJson(sessionId);
    const up = await postUpload(p.url, LEGACY_KEY, sessionParts(doc, { report }));
    expect(up.status).toBe(200);
    const got = await http(p.url, 'GET', `/api/download?session=${sessionId}&file=report.html`, {
      headers: withKey(LEGACY_KEY),
    });
    expect(got.status).toBe(200);
    expect(got.text === report).toBe(true);
    const page = await http(p.url, 'GET', `/share/?token=${up.body.share_token}`);
    expect(page.status).toBe(200);
    const framed = await http(p.url, 'GET', `/share/frame?token=${up.body.share_token}&file=report.html`);
    expect(framed.text.startsWith('<!doctype html><html><body><h1>from a process</h1>')).toBe(true);
    expect(await blobObjects(dataDir)).toStrictEqual([]);
    expect(await stopProcess(p)).toEqual({ code: 0, signal: null });
  });

  it('a bucket nothing answers for: the portal starts anyway, logs the bucket and the endpoint (never the secret), and answers 503 for session files', async () => {
    const dead = await deadAddress();
    try {
      const endpoint = `http://127.0.0.1:${dead.port}`;
      const p = await startPortalProcess({
        dataDir: await makeDataDir('svc-s3-'),
        env: await processEnv({
          ...peer.env(),
          AWS_ENDPOINT_URL_S3: endpoint,
          AWS_SECRET_ACCESS_KEY: 'Secret-Never-Printed-42',
        }),
      });
      const logged = p
        .stdout()
        .split('\n')
        .filter((l) => l.includes('session storage is not reachable; starting without it'))
        .map((l) => JSON.parse(l) as { err: { message: string } });
      expect(logged).toHaveLength(1);
      expect(logged[0]?.err.message).toMatch(
        new RegExp(`^S3 bucket "${peer.bucket}" at ${endpoint} is not reachable: ECONNRESET`),
      );
      const up = await postUpload(p.url, LEGACY_KEY, sessionParts(sessionJson(newSessionId())));
      expect({ status: up.status, body: up.body }).toStrictEqual({ status: 503, body: UNAVAILABLE });
      expect(await stopProcess(p)).toEqual({ code: 0, signal: null });
      expect(p.stderr() + p.stdout()).not.toContain('Secret-Never-Printed-42');
    } finally {
      await dead.close();
    }
  });

  it('a bucket that does not exist: exit 2 with one configuration line', async () => {
    const p = await spawnPortal({
      dataDir: await makeDataDir('svc-s3-'),
      env: await processEnv({ ...peer.env(), SVC_BLOB_URL: 's3://no-such-bucket/sessions' }),
    });
    expect(await waitForExit(p, 60_000)).toEqual({ code: 2, signal: null });
    expect(p.stderr()).toBe(
      `Invalid configuration: SVC_BLOB_URL names S3 bucket "no-such-bucket" at ${peer.endpoint}, which does not exist\n`,
    );
  });
});
