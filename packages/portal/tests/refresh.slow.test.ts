import type pg from 'pg';
import { UPLOAD_LIMIT_BYTES } from '@svc/protocol';
import { beforeAll, describe, expect, it } from 'vitest';
import { createLicense, licenseAction, type LicenseFixture } from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { LEGACY_KEY, type TestPortal } from '@svc/test-support/portal';
import { usePortalWithDb } from '@svc/test-support/portal-db';
import {
  blobObjects,
  blobTmp,
  newSessionId,
  postUpload,
  rawRequest,
  sessionParts,
  sha256,
  type SessionFiles,
} from '@svc/test-support/upload';

/** PUT /api/refresh (docs/api.md#error-body-and-status-codes table; 403 scope). */

const REPORT_V1 = '<!doctype html><html><body><h1>Report v1</h1></body></html>';
const EXEC_V1 = '<!doctype html><html><body><h1>Exec v1</h1></body></html>';
const LOG = 'log line\n';

function sessionJson(sessionId: string) {
  return {
    metadata: { session_id: sessionId, client: 'Acme', target: '10.0.0.0/24' },
    summary: { risk_score: 30, risk_grade: 'B', total_findings: 3, total_hosts: 2 },
  };
}

describe('PUT /api/refresh', () => {
  let portal: TestPortal;
  let db: pg.Client;
  let admin: string;
  let keyA: LicenseFixture;
  let keyB: LicenseFixture;

  async function upload(
    key: string,
    files: SessionFiles = { report: REPORT_V1, exec: EXEC_V1, log: LOG },
  ): Promise<string> {
    const sessionId = newSessionId();
    const res = await postUpload(portal.url, key, sessionParts(sessionJson(sessionId), files));
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.text}`);
    return sessionId;
  }
  const refresh = (query: string, body: string | Buffer, headers: Record<string, string> = {}) =>
    rawRequest(`${portal.url}/api/refresh?${query}`, {
      method: 'PUT',
      headers: { 'content-type': 'text/html', ...headers },
      body: Buffer.from(body),
    });
  const download = (sessionId: string, file: string) =>
    http(portal.url, 'GET', `/api/download?session=${sessionId}&file=${file}`, { headers: withToken(admin) });
  const row = async (sessionId: string) =>
    (await db.query('SELECT * FROM sessions WHERE session_id = $1', [sessionId])).rows[0] as Record<string, any>;
  const detail = async (sessionId: string) =>
    (await http(portal.url, 'GET', `/api/sessions?session=${sessionId}`, { headers: withToken(admin) })).body;
  const objects = () => blobObjects(portal.dataDir);

  usePortalWithDb(async (p) => {
    ({ portal, db } = p);
    admin = await portal.adminToken();
    keyA = await createLicense(portal, { tier: 'professional' });
    keyB = await createLicense(portal, { tier: 'professional' });
  });

  describe('200', () => {
    it('replaces report.html and nothing else: metadata, status, notes, other files, share token stay', async () => {
      const sessionId = await upload(keyA.key);
      const patched = await http(portal.url, 'PATCH', `/api/sessions?session=${sessionId}`, {
        headers: withToken(admin),
        json: { status: 'in_review', note: 'looking' },
      });
      expect(patched.status).toBe(200);
      const before = await row(sessionId);
      const detailBefore = await detail(sessionId);
      const objectsBefore = await objects();

      const v2 = '<!doctype html><html><body><h1>Report v2 – überarbeitet</h1></body></html>';
      const res = await refresh(`session=${sessionId}&file=report.html`, v2, withKey(keyA.key));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        session_id: sessionId,
        file: 'report.html',
        message: 'report.html replaced',
      });

      const after = await row(sessionId);
      expect(after.version).toBe(before.version + 1);
      expect(after.files['report.html']).toEqual({
        // docs/api.md#ids-are-per-client: under the session's client, then the day.
        key: expect.stringMatching(/^sessions\/(?:c-[A-Za-z0-9_-]+|h-[0-9a-f]{32})\/\d{4}-\d{2}-\d{2}\//),
        size: Buffer.byteLength(v2),
        sha256: sha256(v2),
        content_type: 'text/html; charset=utf-8',
      });
      expect(after.files['report.html'].key).not.toBe(before.files['report.html'].key);
      for (const file of ['session_results.json', 'pipeline.log', 'exec_summary.html'])
        expect(after.files[file]).toEqual(before.files[file]);
      for (const col of [
        'metadata',
        'status',
        'client_id',
        'client',
        'target',
        'risk_score',
        'risk_grade',
        'uploaded_at',
        'expires_at',
        'license_id',
      ])
        expect(after[col], col).toEqual(before[col]);

      const detailAfter = await detail(sessionId);
      const { files: filesBefore, updated_at: _u1, ...restBefore } = detailBefore.session;
      const { files: filesAfter, updated_at: _u2, ...restAfter } = detailAfter.session;
      expect(restAfter).toEqual(restBefore);
      expect(detailAfter.status_history).toEqual(detailBefore.status_history);
      expect(detailAfter.notes).toEqual(detailBefore.notes);
      expect(filesAfter.filter((f: any) => f.name !== 'report.html')).toEqual(
        filesBefore.filter((f: any) => f.name !== 'report.html'),
      );

      // The new content is served; the old object is gone, nothing else was added.
      expect((await download(sessionId, 'report.html')).text).toBe(v2);
      const objectsAfter = await objects();
      expect(objectsAfter).toHaveLength(objectsBefore.length);
      expect(objectsAfter).not.toContain(before.files['report.html'].key);
      expect(objectsAfter).toContain(after.files['report.html'].key);
    });

    it('replaces exec_summary.html; a charset parameter on the content type is fine', async () => {
      const sessionId = await upload(keyA.key);
      const res = await refresh(`session=${sessionId}&file=exec_summary.html`, '<p>exec v2</p>', {
        ...withKey(keyA.key),
        'content-type': 'text/html; charset=utf-8',
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        session_id: sessionId,
        file: 'exec_summary.html',
        message: 'exec_summary.html replaced',
      });
      expect((await download(sessionId, 'exec_summary.html')).text).toBe('<p>exec v2</p>');
    });

    it('adds exec_summary.html to a session uploaded without one, and has_exec_summary follows the files', async () => {
      const sessionId = await upload(keyA.key, { report: REPORT_V1 });
      expect((await row(sessionId)).metadata.has_exec_summary).toBe(false);
      const objectsBefore = await objects();
      const res = await refresh(`session=${sessionId}&file=exec_summary.html`, EXEC_V1, withKey(keyA.key));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        session_id: sessionId,
        file: 'exec_summary.html',
        message: 'exec_summary.html added',
      });
      const after = await row(sessionId);
      expect(after.metadata.has_exec_summary).toBe(true);
      expect(Object.keys(after.files).sort()).toEqual(['exec_summary.html', 'report.html', 'session_results.json']);
      expect(await objects()).toHaveLength(objectsBefore.length + 1);
      const stored = (
        await db.query('SELECT token, token_hash, token_sealed FROM share_tokens WHERE session_id = $1', [sessionId])
      ).rows[0];
      const share = await http(portal.url, 'GET', `/api/share?token=${portal.ctx.shareTokens.open(stored)}`);
      expect(share.body.has_exec_summary).toBe(true);
    });

    it('adds report.html to a session without one', async () => {
      const sessionId = await upload(keyA.key, {});
      const res = await refresh(`session=${sessionId}&file=report.html`, REPORT_V1, withKey(keyA.key));
      expect(res.status).toBe(200);
      expect(res.body.message).toBe('report.html added');
      expect((await download(sessionId, 'report.html')).text).toBe(REPORT_V1);
    });

    it('the legacy key may refresh any session', async () => {
      const sessionId = await upload(keyB.key);
      const res = await refresh(`session=${sessionId}&file=report.html`, '<p>by legacy</p>', withKey(LEGACY_KEY));
      expect(res.status).toBe(200);
      expect((await download(sessionId, 'report.html')).text).toBe('<p>by legacy</p>');
    });

    it('another key of the same client may refresh', async () => {
      const sessionId = await upload(keyA.key);
      const second = await createLicense(portal, { tier: 'business', client_id: keyA.record.client_id });
      expect(
        (await refresh(`session=${sessionId}&file=report.html`, '<p>second key</p>', withKey(second.key))).status,
      ).toBe(200);
    });

    it('concurrent refreshes of the two files of one session both land (no lost update)', async () => {
      const sessionId = await upload(keyA.key);
      const before = await row(sessionId);
      const [a, b] = await Promise.all([
        refresh(`session=${sessionId}&file=report.html`, '<p>report v3</p>', withKey(keyA.key)),
        refresh(`session=${sessionId}&file=exec_summary.html`, '<p>exec v3</p>', withKey(keyA.key)),
      ]);
      expect([a.status, b.status]).toEqual([200, 200]);
      expect((await download(sessionId, 'report.html')).text).toBe('<p>report v3</p>');
      expect((await download(sessionId, 'exec_summary.html')).text).toBe('<p>exec v3</p>');
      const after = await row(sessionId);
      expect(after.version).toBe(before.version + 2);
      const all = await objects();
      for (const f of ['report.html', 'exec_summary.html']) {
        expect(all).not.toContain(before.files[f].key);
        expect(all).toContain(after.files[f].key);
      }
    });

    it('a body of exactly 25 MB is accepted', async () => {
      const sessionId = await upload(keyA.key);
      const big = Buffer.alloc(UPLOAD_LIMIT_BYTES, 'a');
      const res = await refresh(`session=${sessionId}&file=report.html`, big, withKey(keyA.key));
      expect(res.status).toBe(200);
      expect((await row(sessionId)).files['report.html'].size).toBe(UPLOAD_LIMIT_BYTES);
    });
  });

  describe('400: missing session or file parameter, or file not allowed', () => {
    let sessionId: string;
    beforeAll(async () => {
      sessionId = await upload(keyA.key);
    });
    const allowed = 'Invalid file parameter: must be one of report.html, exec_summary.html';
    const cases: [string, string][] = [
      ['file=report.html', 'Missing session parameter'],
      ['session=&file=report.html', 'Missing session parameter'],
      ['session=SESSION', 'Missing file parameter'],
      ['session=SESSION&file=', 'Missing file parameter'],
      ['session=SESSION&file=session_results.json', allowed],
      ['session=SESSION&file=pipeline.log', allowed],
      ['session=SESSION&file=report_20250101.html', allowed],
      ['session=SESSION&file=..%2Freport.html', allowed],
      ['session=SESSION&file=Report.html', allowed],
      ['session=..%2F..%2Fetc&file=report.html', 'Invalid session parameter: must match ^[a-zA-Z0-9_-]+$'],
    ];
    for (const [query, error] of cases) {
      it(`${query} → ${error}`, async () => {
        const objectsBefore = await objects();
        const res = await refresh(query.replace('SESSION', sessionId), '<p>x</p>', withKey(keyA.key));
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error });
        expect(await objects()).toEqual(objectsBefore);
      });
    }

    it('an empty body is refused and leaves nothing behind', async () => {
      const objectsBefore = await objects();
      const res = await refresh(`session=${sessionId}&file=report.html`, '', withKey(keyA.key));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'Empty body: send the file as text/html' });
      expect(await objects()).toEqual(objectsBefore);
      expect((await download(sessionId, 'report.html')).text).toBe(REPORT_V1);
    });

    it('no body and no content type', async () => {
      const res = await rawRequest(`${portal.url}/api/refresh?session=${sessionId}&file=report.html`, {
        method: 'PUT',
        headers: withKey(keyA.key),
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'Missing body: send the file as text/html' });
    });
  });

  describe('401: invalid or missing API key', () => {
    let sessionId: string;
    beforeAll(async () => {
      sessionId = await upload(keyA.key);
    });

    it('missing key, also with a valid admin JWT (refresh takes keys only)', async () => {
      for (const headers of [{}, withToken(admin)]) {
        const res = await refresh(`session=${sessionId}&file=report.html`, '<p>x</p>', headers);
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ error: 'Missing API key' });
      }
    });

    it('invalid key (unknown, wrong format), before any parameter check', async () => {
      for (const key of [`svc_pro_${'0'.repeat(64)}`, 'nonsense']) {
        const res = await refresh('file=nope', '<p>x</p>', withKey(key));
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ error: 'Invalid API key' });
      }
    });

    it('revoked and inactive keys', async () => {
      const revoked = await createLicense(portal, { tier: 'professional', client_id: keyA.record.client_id });
      await licenseAction(portal, revoked.record.id, 'revoke');
      const inactive = await createLicense(portal, { tier: 'professional', client_id: keyA.record.client_id });
      await licenseAction(portal, inactive.record.id, 'deactivate');
      const r1 = await refresh(`session=${sessionId}&file=report.html`, '<p>x</p>', withKey(revoked.key));
      expect([r1.status, r1.body]).toEqual([401, { error: 'License key has been revoked' }]);
      const r2 = await refresh(`session=${sessionId}&file=report.html`, '<p>x</p>', withKey(inactive.key));
      expect([r2.status, r2.body]).toEqual([401, { error: 'License key is inactive' }]);
      expect((await download(sessionId, 'report.html')).text).toBe(REPORT_V1);
    });

    it('an Authorization header is refused with the plain 401', async () => {
      const res = await refresh(`session=${sessionId}&file=report.html`, '<p>x</p>', {
        ...withKey(keyA.key),
        authorization: `Bearer ${admin}`,
      });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'Unauthorized' });
    });
  });

  describe('404: another client (the same answer as a missing session)', () => {
    it('a key of another client cannot refresh, and nothing is written', async () => {
      const sessionId = await upload(keyA.key);
      const before = await row(sessionId);
      const objectsBefore = await objects();
      const res = await refresh(`session=${sessionId}&file=report.html`, '<p>hijack</p>', withKey(keyB.key));
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Session not found' });
      expect(await row(sessionId)).toEqual(before);
      expect(await objects()).toEqual(objectsBefore);
    });
  });

  describe('404: session does not exist', () => {
    it('answers 404 and writes nothing', async () => {
      const objectsBefore = await objects();
      const res = await refresh(`session=${newSessionId()}&file=report.html`, '<p>x</p>', withKey(keyA.key));
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Session not found' });
      expect(await objects()).toEqual(objectsBefore);
    });
    it('also for the legacy key', async () => {
      const res = await refresh(`session=${newSessionId()}&file=exec_summary.html`, '<p>x</p>', withKey(LEGACY_KEY));
      expect(res.status).toBe(404);
    });
  });

  describe('405: method is not PUT', () => {
    for (const method of ['GET', 'POST', 'PATCH', 'DELETE', 'OPTIONS']) {
      it(`${method} → 405 with Allow: PUT, with or without a key`, async () => {
        for (const headers of [withKey(keyA.key), {}]) {
          const res = await rawRequest(`${portal.url}/api/refresh?session=x&file=report.html`, {
            method,
            headers:
              method === 'GET' || method === 'DELETE' || method === 'OPTIONS'
                ? headers
                : { ...headers, 'content-type': 'text/html' },
            ...(method === 'POST' || method === 'PATCH' ? { body: Buffer.from('<p>x</p>') } : {}),
          });
          expect(res.status).toBe(405);
          expect(res.headers['allow']).toBe('PUT');
          expect(res.body).toEqual({ error: `Method ${method} not allowed: use PUT` });
        }
      });
    }
    it('HEAD → 405 with Allow: PUT and no body', async () => {
      const res = await fetch(`${portal.url}/api/refresh?session=x&file=report.html`, { method: 'HEAD' });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('PUT');
      expect(await res.text()).toBe('');
    });
    it('the OpenAPI document lists only PUT for /api/refresh', async () => {
      const doc = (await http(portal.url, 'GET', '/api/openapi.json')).body;
      expect(Object.keys(doc.paths['/api/refresh'])).toEqual(['put']);
    });
  });

  describe('other statuses', () => {
    it('413 for a body over 25 MB, declared or streamed, leaving nothing behind', async () => {
      const sessionId = await upload(keyA.key);
      const objectsBefore = await objects();
      const declared = await rawRequest(`${portal.url}/api/refresh?session=${sessionId}&file=report.html`, {
        method: 'PUT',
        headers: {
          ...withKey(keyA.key),
          'content-type': 'text/html',
          'content-length': String(UPLOAD_LIMIT_BYTES + 1),
        },
        chunks: [Buffer.from('<p>')],
      });
      expect(declared.status).toBe(413);
      expect(declared.body).toEqual({
        error: "File exceeds 25 MB (the portal's upload limit, SVC_UPLOAD_MAX_MB)",
        limit_bytes: UPLOAD_LIMIT_BYTES,
      });
      const chunk = Buffer.alloc(1024 * 1024, 'b');
      const streamed = await rawRequest(`${portal.url}/api/refresh?session=${sessionId}&file=report.html`, {
        method: 'PUT',
        headers: { ...withKey(keyA.key), 'content-type': 'text/html' },
        chunks: (function* () {
          for (let i = 0; i < 26; i++) yield chunk;
        })(),
      });
      expect(streamed.status).toBe(413);
      expect(streamed.body).toEqual({
        error: "File exceeds 25 MB (the portal's upload limit, SVC_UPLOAD_MAX_MB)",
        limit_bytes: UPLOAD_LIMIT_BYTES,
      });
      expect(await objects()).toEqual(objectsBefore);
      expect(await blobTmp(portal.dataDir)).toEqual([]);
      expect((await download(sessionId, 'report.html')).text).toBe(REPORT_V1);
    });

    it('415 for a body that is not text/html', async () => {
      const sessionId = await upload(keyA.key);
      for (const type of [
        'text/plain',
        'application/json',
        'application/octet-stream',
        'application/x-www-form-urlencoded',
      ]) {
        const res = await refresh(`session=${sessionId}&file=report.html`, '{"a":1}', {
          ...withKey(keyA.key),
          'content-type': type,
        });
        expect(res.status, type).toBe(415);
        expect(res.body).toEqual({ error: 'Unsupported Content-Type' });
      }
    });
  });
});
