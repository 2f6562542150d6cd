import fs from 'node:fs/promises';
import nodeHttp from 'node:http';
import type pg from 'pg';
import { sql } from 'kysely';
import { UPLOAD_LIMIT_BYTES } from '@svc/protocol';
import { sha256Hex } from '@svc/protocol/node';
import { describe, expect, it } from 'vitest';
import type { LegacyPrincipal } from '../src/auth/principal.ts';
import { commitSession } from '../src/sessions/commit.ts';
import { deriveMetadata } from '../src/sessions/derive.ts';
import type { StoredShareToken } from '../src/sessions/share-seal.ts';
import type { DomainEvent } from '../src/events/bus.ts';
import { createLicense, licenseAction, uniqueClientId, type LicenseFixture } from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { LEGACY_KEY, type TestPortal } from '@svc/test-support/portal';
import { usePortalWithDb } from '@svc/test-support/portal-db';
import {
  blobObjects,
  blobPath,
  blobTmp,
  closing,
  multipart,
  newBoundary,
  newSessionId,
  partHeader,
  postUpload,
  rawRequest,
  sessionDoc,
  sessionParts,
  sha256,
  type Doc,
  type Part,
} from '@svc/test-support/upload';

/**
 * POST /api/upload (docs/api.md#sessions, Errors, Limits, Events scan_completed;
 * docs/api.md#licenses, sections 4 and 5): real portal, real PostgreSQL, blob store on disk.
 */

const BASE_URL = 'http://portal.test';
const LOG = 'pipeline started\nstage nmap ok\nstage report ok\n';
const REPORT =
  '<!doctype html><html><body><h1>Report</h1><div id="consultation-section" class="consultation-section"></div></body></html>';
const EXEC = '<!doctype html><html><body><h1>Executive summary</h1></body></html>';

describe('POST /api/upload', () => {
  let portal: TestPortal;
  let admin: string;
  let db: pg.Client;
  /** A business-tier key of its own client, for tests that need nothing special. */
  let biz: LicenseFixture;

  usePortalWithDb(
    async (p) => {
      ({ portal, db } = p);
      // Twelve uploads at once with one key below: above the default of uploads in progress per key.
      admin = await portal.adminToken();
      biz = await createLicense(portal, { tier: 'business' });
    },
    { env: { SVC_UPLOADS_PER_KEY: '12' } },
  );

  const detail = (sessionId: string) =>
    http(portal.url, 'GET', `/api/sessions?session=${encodeURIComponent(sessionId)}`, { headers: withToken(admin) });
  /** The session `sessionId` (of `clientId` when given: docs/api.md#ids-are-per-client, ids are unique per client). */
  const row = async (sessionId: string, clientId?: string) =>
    (
      await db.query('SELECT * FROM sessions WHERE session_id = $1 AND ($2::text IS NULL OR client_id = $2)', [
        sessionId,
        clientId ?? null,
      ])
    ).rows[0] as Record<string, any> | undefined;
  /** The stored share token (its hash and sealed copy, sessions/share-seal.ts). */
  const tokenRow = async (sessionId: string) =>
    (await db.query('SELECT token, token_hash, token_sealed FROM share_tokens WHERE session_id = $1', [sessionId]))
      .rows[0] as StoredShareToken | undefined;
  const storedJson = async (sessionId: string): Promise<Doc> => {
    const r = await row(sessionId);
    return JSON.parse(
      await fs.readFile(blobPath(portal.dataDir, r!['files']['session_results.json'].key), 'utf8'),
    ) as Doc;
  };
  /** Assert the blob store has exactly `before` plus `added` objects and no staging files. */
  const expectNoLeftovers = async (before: string[]) => {
    expect(await blobObjects(portal.dataDir)).toStrictEqual(before);
    expect(await blobTmp(portal.dataDir)).toStrictEqual([]);
  };
  const upload = (key: string | null, doc: Doc | string, files: Parameters<typeof sessionParts>[1] = {}) =>
    postUpload(portal.url, key, sessionParts(doc, files));

  describe('a successful upload', () => {
    it('answers success, session_id, share_token (64 hex), share_url and message', async () => {
      const id = newSessionId();
      const res = await upload(LEGACY_KEY, sessionDoc('session-minimal.json', id));
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toStrictEqual([
        'findings',
        'message',
        'session_id',
        'share_token',
        'share_url',
        'success',
      ]);
      // What the upload did to the findings of record of its target (docs/findings-of-record.md).
      expect(res.body.findings).toEqual({ new: 3, persistent: 0, reopened: 0, resolved: 0, not_checked: 0 });
      expect(res.body.success).toBe(true);
      expect(res.body.session_id).toBe(id);
      expect(res.body.share_token).toMatch(/^[0-9a-f]{64}$/);
      expect(res.body.share_url).toBe(`${BASE_URL}/share/?token=${res.body.share_token}`);
      expect(res.body.message).toBe('Session uploaded');
    });

    it('stores the session row, its share token and every file as a blob object with the right sha256', async () => {
      const id = newSessionId();
      const doc = sessionDoc('session-complete.json', id);
      const res = await upload(biz.key, doc, { log: LOG, report: REPORT, exec: EXEC });
      expect(res.status).toBe(200);

      const r = await row(id);
      expect(r).toBeDefined();
      expect(r!['client_id']).toBe(biz.record.client_id);
      expect(r!['license_id']).toBe(biz.record.id);
      expect(r!['status']).toBe('new');
      // Never in clear at rest: its hash, and a copy only the key-encryption key opens.
      const stored = (await tokenRow(id))!;
      expect(stored.token).toBeNull();
      expect(stored.token_hash).toBe(sha256Hex(res.body.share_token));
      expect(portal.ctx.shareTokens.open(stored)).toBe(res.body.share_token);

      const files = r!['files'] as Record<string, { key: string; size: number; sha256: string; content_type: string }>;
      expect(Object.keys(files).sort()).toStrictEqual([
        'exec_summary.html',
        'pipeline.log',
        'report.html',
        'session_results.json',
      ]);
      const sent: Record<string, string> = { 'pipeline.log': LOG, 'report.html': REPORT, 'exec_summary.html': EXEC };
      for (const [name, f] of Object.entries(files)) {
        const onDisk = await fs.readFile(blobPath(portal.dataDir, f.key));
        expect(sha256(onDisk), name).toBe(f.sha256);
        expect(onDisk.length, name).toBe(f.size);
        if (sent[name] !== undefined) expect(f.sha256, name).toBe(sha256(sent[name]));
      }
      expect(files['session_results.json']!.content_type).toBe('application/json');
      expect(files['pipeline.log']!.content_type).toMatch(/^text\/plain/);
      expect(files['report.html']!.content_type).toMatch(/^text\/html/);

      // The detail view lists the files (never their blob keys).
      const view = await detail(id);
      expect(view.status).toBe(200);
      expect(view.body.session.files.map((f: { name: string }) => f.name).sort()).toStrictEqual(
        Object.keys(files).sort(),
      );
      for (const f of view.body.session.files) {
        expect(f).toStrictEqual({
          name: f.name,
          size: files[f.name]!.size,
          sha256: files[f.name]!.sha256,
          content_type: files[f.name]!.content_type,
        });
      }
      expect(view.text).not.toContain(files['report.html']!.key);
    });

    it("shows the minimal file's metadata in GET /api/sessions?session=", async () => {
      const id = newSessionId();
      const doc = sessionDoc('session-minimal.json', id);
      expect((await upload(LEGACY_KEY, doc)).status).toBe(200);
      const res = await detail(id);
      expect(res.status).toBe(200);
      const s = res.body.session;
      // Stored: what the file says; shown: its numbers as its findings stand (a high, a medium, an info).
      expect((await row(id))!['metadata']).toEqual(deriveMetadata({ doc, keyClientId: null, hasExecSummary: false }));
      expect(s).toMatchObject({
        session_id: id,
        client_id: null,
        client: null,
        target: '192.168.1.0/24',
        risk_score: 48,
        risk_grade: 'C',
        exception_summary: {
          total_exceptions: 0,
          by_status: { accepted: 0, expired: 0 },
          score_delta: 0,
          risk_score_operational: 48,
          risk_grade_operational: 'C',
        },
        // (new or persistent: earlier tests uploaded this target under the legacy key too)
        remediation_summary: {
          total: 3,
          resolved_count: 0,
          by_severity: { critical: 0, high: 1, medium: 1, low: 0, info: 1 },
        },
        disposition_summary: { false_positive: 0 },
        total_findings: 3,
        total_hosts: 2,
        severity_summary: { critical: 0, high: 1, medium: 1, low: 0, info: 1 },
        has_exec_summary: false,
        has_topology: false,
        orc964_summary: null,
        alerts_summary: null,
        is_scheduled: false,
        status: 'new',
      });
      expect(s.share_url).toMatch(new RegExp(`^${BASE_URL}/share/\\?token=[0-9a-f]{64}$`));
      expect(Date.parse(s.expires_at) - Date.parse(s.uploaded_at)).toBe(90 * 86_400_000);
      expect(s.files.map((f: { name: string }) => f.name)).toStrictEqual(['session_results.json']);
      expect(res.body.status_history).toStrictEqual([]);
      expect(res.body.notes).toStrictEqual([]);
    });

    it("shows the complete file's metadata in GET /api/sessions?session=", async () => {
      const id = newSessionId();
      const doc = sessionDoc('session-complete.json', id);
      expect((await upload(biz.key, doc, { exec: EXEC })).status).toBe(200);
      const res = await detail(id);
      expect(res.status).toBe(200);
      const s = res.body.session;
      expect((await row(id))!['metadata']).toEqual(
        deriveMetadata({ doc, keyClientId: biz.record.client_id, hasExecSummary: true }),
      );
      // Shown as its findings stand today: one critical, two highs, two mediums and a low by the
      // current formula (the file's 62 is an older scanner's); the file's three exceptions are
      // past their expiry now, so none holds.
      expect(s).toMatchObject({
        client_id: biz.record.client_id,
        client: 'Acme Water District',
        target: '10.20.0.0/24',
        risk_score: 75,
        risk_grade: 'D',
        total_findings: 6,
        total_hosts: 3,
        tool_version: '4.2.3',
        has_exec_summary: true,
        has_topology: true,
        exception_summary: {
          total_exceptions: 3,
          by_status: { accepted: 0, expired: 3 },
          score_delta: 0,
          risk_score_operational: 75,
          risk_grade_operational: 'D',
        },
        orc964_summary: { enabled: true, technical_covered: 3, technical_total: 5, attest_pending: 3 },
        schedule_id: 'sched_3f2a9c1b7d04',
        schedule_cron: '0 2 * * 1',
        schedule_profile: 'full_recon',
        is_scheduled: true,
        scheduled_by: 'daemon',
      });
      expect(s.compliance_summary.total_mappings).toBe(9);
      expect(s.compliance_summary.by_framework.map((f: { framework: string }) => f.framework)).toStrictEqual([
        'CIS Controls v8',
        'NIST CSF',
        'PCI-DSS v4.0',
        'SOC 2',
        'ORC 9.64',
      ]);
      // metadata.license is ignored: nothing of it shows.
      expect(res.text).not.toContain('9f86d081884c7d659a2feaa0c55ad015');
      expect(s).not.toHaveProperty('license');
    });

    it('accepts session_json as a plain field, also one declared application/json', async () => {
      for (const contentType of [undefined, 'application/json', 'text/plain']) {
        const id = newSessionId();
        const part: Part = { name: 'session_json', data: JSON.stringify(sessionDoc('session-minimal.json', id)) };
        if (contentType !== undefined) part.contentType = contentType;
        const res = await postUpload(portal.url, LEGACY_KEY, [part]);
        expect(res.status, `${contentType}: ${res.text}`).toBe(200);
        expect(res.body.session_id).toBe(id);
        expect((await detail(id)).body.session.total_findings).toBe(3);
      }
    });

    it('is the only route that reads multipart: any other answers 415 and creates nothing', async () => {
      const licensesBefore = (await db.query('SELECT count(*)::int AS n FROM licenses')).rows[0].n;
      const body = '--b\r\nContent-Disposition: form-data; name="tier"\r\n\r\nbusiness\r\n--b--\r\n';
      for (const [method, path, headers] of [
        ['POST', '/api/licenses', withToken(admin)],
        ['POST', '/api/health', withKey(biz.key)],
      ] as const) {
        const res = await http(portal.url, method, path, {
          headers: { ...headers, 'content-type': 'multipart/form-data; boundary=b' },
          body,
        });
        expect(res.status, path).toBe(415);
        expect(res.body, path).toEqual({ error: 'Unsupported Content-Type' });
      }
      expect((await db.query('SELECT count(*)::int AS n FROM licenses')).rows[0].n).toBe(licensesBefore);
    });

    it('accepts a chunked request (no Content-Length) under the limit', async () => {
      const id = newSessionId();
      const mp = multipart(sessionParts(sessionDoc('session-minimal.json', id), { log: LOG }));
      const chunks = function* () {
        for (let i = 0; i < mp.body.length; i += 100) yield mp.body.subarray(i, i + 100);
      };
      const res = await rawRequest(`${portal.url}/api/upload`, {
        headers: { 'content-type': mp.contentType, 'x-api-key': LEGACY_KEY },
        chunks: chunks(),
      });
      expect(res.status, res.text).toBe(200);
      expect(await row(id)).toBeDefined();
    });

    it('strings PostgreSQL cannot store (NUL, lone surrogates) count as absent instead of failing the upload', async () => {
      const id = newSessionId();
      const doc = sessionDoc('session-complete.json', id);
      doc['metadata']['target'] = 'host\u0000.example';
      doc['metadata']['client'] = 'Acme \ud800';
      doc['metadata']['tool_version'] = '4.2.3\u0000';
      doc['compliance'][0]['framework'] = 'CIS\u0000';
      doc['alerts_summary']['alerts_triggered'][0]['message'] = 'bad \udfff';
      const res = await upload(LEGACY_KEY, doc);
      expect(res.status, res.text).toBe(200);
      const s = (await detail(id)).body.session;
      expect(s).toMatchObject({ target: null, client: null, tool_version: null });
      expect(s.alerts_summary.alerts_triggered[0].message).toBeNull();
      expect(s.compliance_summary.by_framework.map((f: { framework: string }) => f.framework)).not.toContain(
        'CIS\u0000',
      );
      // The file itself is stored as sent.
      expect((await row(id))!['files']['session_results.json'].sha256).toBe(sha256(JSON.stringify(doc, null, 2)));
    });

    it('ignores unknown fields (newer scanners may send more)', async () => {
      const id = newSessionId();
      const parts = [
        ...sessionParts(sessionDoc('session-minimal.json', id)),
        { name: 'future_field', data: 'x' },
        { name: 'future_file', filename: 'f.bin', data: 'abc' },
      ];
      const res = await postUpload(portal.url, LEGACY_KEY, parts);
      expect(res.status, res.text).toBe(200);
      expect(Object.keys((await row(id))!['files'])).toStrictEqual(['session_results.json']);
    });
  });

  describe('client_id', () => {
    it("comes from the key and overrides the JSON's, also inside the stored JSON", async () => {
      const id = newSessionId();
      const doc = sessionDoc('session-complete.json', id);
      expect(doc['metadata']['client_id']).toBe('acme-from-json');
      expect((await upload(biz.key, doc)).status).toBe(200);
      expect((await row(id))!['client_id']).toBe(biz.record.client_id);
      expect((await detail(id)).body.session.client_id).toBe(biz.record.client_id);
      const stored = await storedJson(id);
      expect(stored['metadata']['client_id']).toBe(biz.record.client_id);
      // Everything else of the file is kept.
      expect({ ...stored, metadata: { ...stored['metadata'], client_id: 'acme-from-json' } }).toStrictEqual(doc);
    });

    it('is added to a file that has none', async () => {
      const id = newSessionId();
      expect((await upload(biz.key, sessionDoc('session-minimal.json', id))).status).toBe(200);
      expect((await storedJson(id))['metadata']['client_id']).toBe(biz.record.client_id);
      // Even when the file has only a top-level session_id.
      const id2 = newSessionId();
      expect((await upload(biz.key, { session_id: id2, target: 'x.example' })).status).toBe(200);
      expect((await row(id2))!['client_id']).toBe(biz.record.client_id);
      expect((await storedJson(id2))['metadata']).toStrictEqual({ client_id: biz.record.client_id });
    });

    it("the legacy key keeps the JSON's, and the stored file is the bytes sent", async () => {
      const id = newSessionId();
      const doc = sessionDoc('session-complete.json', id);
      const text = JSON.stringify(doc);
      expect((await upload(LEGACY_KEY, text)).status).toBe(200);
      const r = await row(id);
      expect(r!['client_id']).toBe('acme-from-json');
      expect(r!['license_id']).toBeNull();
      expect(r!['files']['session_results.json'].sha256).toBe(sha256(text));
      expect((await storedJson(id))['metadata']['client_id']).toBe('acme-from-json');
    });
  });

  describe('re-upload of the same session id', () => {
    it('by the same client replaces it: same share token, old files deleted, status and history kept', async () => {
      const id = newSessionId();
      const first = await upload(biz.key, sessionDoc('session-complete.json', id), { log: LOG, report: REPORT });
      expect(first.status).toBe(200);
      const oldFiles = (await row(id))!['files'] as Record<string, { key: string }>;
      const patched = await http(portal.url, 'PATCH', `/api/sessions?session=${id}`, {
        headers: withToken(admin),
        json: { status: 'in_review', note: 'looking' },
      });
      expect(patched.status).toBe(200);

      // Another key of the same client counts as the same client.
      const sameClient = await createLicense(portal, { tier: 'professional', client_id: biz.record.client_id });
      const doc2 = sessionDoc('session-complete.json', id);
      doc2['summary']['risk_score'] = 12;
      const second = await upload(sameClient.key, doc2, { log: 'second log\n', exec: EXEC });
      expect(second.status, second.text).toBe(200);
      expect(second.body).toStrictEqual({
        success: true,
        session_id: id,
        share_token: first.body.share_token,
        share_url: first.body.share_url,
        message: 'Session replaced',
        findings: { new: 0, persistent: 6, reopened: 0, resolved: 0, not_checked: 0 },
      });

      for (const f of Object.values(oldFiles))
        await expect(fs.stat(blobPath(portal.dataDir, f.key))).rejects.toThrow(/ENOENT/);
      const r = await row(id);
      expect(r!['status']).toBe('in_review');
      expect(r!['version']).toBe(2);
      expect(Object.keys(r!['files']).sort()).toStrictEqual([
        'exec_summary.html',
        'pipeline.log',
        'session_results.json',
      ]);
      for (const f of Object.values(r!['files'] as Record<string, { key: string; sha256: string }>))
        expect(sha256(await fs.readFile(blobPath(portal.dataDir, f.key)))).toBe(f.sha256);
      expect(
        (await db.query('SELECT count(*)::int AS n FROM share_tokens WHERE session_id = $1', [id])).rows[0].n,
      ).toBe(1);

      const view = await detail(id);
      // The file's own score (12) is not what is shown: the portal scores its findings.
      expect(view.body.session).toMatchObject({ risk_score: 75, status: 'in_review', has_exec_summary: true });
      expect(view.body.status_history).toHaveLength(1);
      expect(view.body.notes).toHaveLength(1);
      // The session keeps counting against the key that first uploaded it (docs/api.md#licenses).
      expect(r!['license_id']).toBe(biz.record.id);
    });

    it("by the legacy key: replaces within the same client; a file naming another client makes that client's own session", async () => {
      const id = newSessionId();
      const first = await upload(biz.key, sessionDoc('session-complete.json', id), { log: LOG });
      expect(first.status).toBe(200);
      const before = await row(id, biz.record.client_id);

      // docs/api.md#ids-are-per-client: the id under another client is another session; the first one is untouched.
      const otherClient = `some-other-client-${id}`;
      const moved = sessionDoc('session-complete.json', id);
      moved['metadata']['client_id'] = otherClient;
      const created = await upload(LEGACY_KEY, moved, { log: 'moved' });
      expect(created.status, created.text).toBe(200);
      expect(created.body.message).toBe('Session uploaded');
      expect(created.body.share_token).not.toBe(first.body.share_token);
      expect(await row(id, biz.record.client_id)).toStrictEqual(before);
      expect((await row(id, otherClient))!['license_id']).toBeNull();
      await db.query('DELETE FROM sessions WHERE session_id = $1 AND client_id = $2', [id, otherClient]);

      const same = sessionDoc('session-complete.json', id);
      same['metadata']['client_id'] = biz.record.client_id;
      const replaced = await upload(LEGACY_KEY, same, { log: 'same client' });
      expect(replaced.status, replaced.text).toBe(200);
      expect(replaced.body.message).toBe('Session replaced');
      const after = await row(id);
      expect(after!['client_id']).toBe(biz.record.client_id);
      expect(after!['license_id']).toBe(biz.record.id);
    });

    it("by another client's key creates that client's own session and changes nothing of the first", async () => {
      const id = newSessionId();
      expect((await upload(biz.key, sessionDoc('session-complete.json', id), { log: LOG })).status).toBe(200);
      const before = await row(id, biz.record.client_id);

      // docs/api.md#ids-are-per-client: session ids are unique per client, not per portal (two scans finishing in the
      // same second); the second client's upload is its own session, not a 403.
      const other = await createLicense(portal, { tier: 'business' });
      const res = await upload(other.key, sessionDoc('session-minimal.json', id), {
        log: 'second client',
        report: REPORT,
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body.message).toBe('Session uploaded');
      expect(await row(id, biz.record.client_id)).toStrictEqual(before);
      const mine = await row(id, other.record.client_id);
      expect(mine!['license_id']).toBe(other.record.id);
      expect(Object.keys(mine!['files']).sort()).toStrictEqual(['pipeline.log', 'report.html', 'session_results.json']);
      await http(portal.url, 'DELETE', `/api/sessions?session=${id}`, { headers: withKey(other.key) });
    });
  });

  describe('400 Bad Request, nothing stored', () => {
    const expect400 = async (parts: Part[], message?: RegExp, key = LEGACY_KEY) => {
      const objects = await blobObjects(portal.dataDir);
      const res = await postUpload(portal.url, key, parts);
      expect(res.status, res.text).toBe(400);
      expect(res.headers['content-type']).toMatch(/application\/json/);
      expect(typeof res.body.error).toBe('string');
      if (message) expect(res.body.error).toMatch(message);
      await expectNoLeftovers(objects);
    };

    it('missing session_json (even with other files sent)', async () => {
      await expect400(
        [
          { name: 'pipeline_log', filename: 'pipeline.log', data: LOG },
          { name: 'report_html', filename: 'r.html', data: REPORT },
        ],
        /session_json/,
      );
      await expect400([{ name: 'session_json', filename: 'session_results.json', data: '' }], /session_json/);
    });

    it('a body that is not multipart', async () => {
      const res = await http(portal.url, 'POST', '/api/upload', {
        headers: { 'x-api-key': LEGACY_KEY },
        json: sessionDoc('session-minimal.json'),
      });
      expect(res.status).toBe(400);
    });

    it('invalid JSON', async () => {
      await expect400(sessionParts('{"metadata": {"session_id": "x_1"'), /not valid JSON/);
      await expect400(sessionParts('not json at all'), /not valid JSON/);
      // Declared application/json as a plain field: the multipart plugin's own parse fails.
      await expect400([{ name: 'session_json', contentType: 'application/json', data: '{broken' }], /not valid JSON/);
    });

    it('JSON that is not an object', async () => {
      for (const text of ['[1, 2]', '"20250301_140512"', 'null', '42', 'true'])
        await expect400(sessionParts(text), /JSON object/);
    });

    it('missing or invalid session id', async () => {
      await expect400(sessionParts({ metadata: { target: 'x' } }), /session_id/);
      await expect400(sessionParts({ metadata: { session_id: 42 } }), /session_id/);
      for (const id of ['../x', 'a/b', 'a b', 'a\\b', '..', 'a.b', 'x'.repeat(200), '%2e%2e%2fx', 'a\u0000b']) {
        await expect400(
          sessionParts({ metadata: { session_id: id }, findings: [] }, { log: LOG }),
          /Invalid session id/,
        );
      }
    });

    it('a malformed multipart body (no closing boundary) is a 400, not a 500', async () => {
      const boundary = newBoundary();
      const body = Buffer.from(
        `${partHeader(boundary, { name: 'session_json', filename: 's.json', contentType: 'application/json' })}${JSON.stringify(sessionDoc('session-minimal.json'))}\r\n${partHeader(boundary, { name: 'pipeline_log', filename: 'p.log' })}partial log`,
      );
      const objects = await blobObjects(portal.dataDir);
      const res = await postUpload(portal.url, LEGACY_KEY, {
        body,
        boundary,
        contentType: `multipart/form-data; boundary=${boundary}`,
      });
      expect(res.status, res.text).toBe(400);
      await expectNoLeftovers(objects);
    });

    it('the same field twice', async () => {
      const doc = sessionDoc('session-minimal.json');
      await expect400(
        [...sessionParts(doc, { log: LOG }), { name: 'pipeline_log', filename: 'again.log', data: LOG }],
        /twice/,
      );
    });
  });

  describe('403 for a missing, invalid or revoked key', () => {
    const expect403 = async (key: string | null, message: string) => {
      const objects = await blobObjects(portal.dataDir);
      const id = newSessionId();
      const res = await upload(key, sessionDoc('session-minimal.json', id), { log: LOG });
      expect(res.status).toBe(403);
      expect(res.body).toStrictEqual({ error: message });
      expect(await row(id)).toBeUndefined();
      await expectNoLeftovers(objects);
    };

    it('missing', async () => {
      await expect403(null, 'Missing API key');
      await expect403('', 'Missing API key');
    });

    it('invalid', async () => {
      await expect403(`svc_pro_${'0'.repeat(64)}`, 'Invalid API key');
      await expect403('not-a-key', 'Invalid API key');
      await expect403(`${LEGACY_KEY}x`, 'Invalid API key');
    });

    it('revoked', async () => {
      const lic = await createLicense(portal);
      expect((await upload(lic.key, sessionDoc('session-minimal.json'))).status).toBe(200);
      await licenseAction(portal, lic.record.id, 'revoke');
      await expect403(lic.key, 'License key has been revoked');
    });
  });

  describe('the 25 MB limit counts the whole request body', () => {
    /** session_json + a pipeline_log padded so the whole body is exactly `total` bytes. */
    const bodyOfSize = (sessionId: string, total: number) => {
      const boundary = newBoundary();
      const head = sessionParts(sessionDoc('session-minimal.json', sessionId));
      const logPart = (data: Buffer): Part => ({
        name: 'pipeline_log',
        filename: 'pipeline.log',
        contentType: 'text/plain',
        data,
      });
      const base = multipart([...head, logPart(Buffer.alloc(0))], boundary).body.length;
      const mp = multipart([...head, logPart(Buffer.alloc(total - base, 'x'))], boundary);
      expect(mp.body.length).toBe(total);
      return { mp, logBytes: total - base };
    };

    it('exactly 25 x 1024 x 1024 bytes: 200', async () => {
      const id = newSessionId();
      const { mp, logBytes } = bodyOfSize(id, UPLOAD_LIMIT_BYTES);
      const res = await postUpload(portal.url, LEGACY_KEY, mp);
      expect(res.status, res.text).toBe(200);
      const f = (await row(id))!['files']['pipeline.log'];
      expect(f.size).toBe(logBytes);
      expect((await fs.stat(blobPath(portal.dataDir, f.key))).size).toBe(logBytes);
    });

    it('exactly the limit sent chunked (no Content-Length): 200', async () => {
      const id = newSessionId();
      const { mp } = bodyOfSize(id, UPLOAD_LIMIT_BYTES);
      const res = await rawRequest(`${portal.url}/api/upload`, {
        headers: { 'content-type': mp.contentType, 'x-api-key': LEGACY_KEY },
        chunks: slices(mp.body, 64 * 1024),
      });
      expect(res.status, res.text).toBe(200);
      expect(await row(id)).toBeDefined();
    });

    it('one byte more: 413 and nothing stored (no row, no blob object, no staging file)', async () => {
      const objects = await blobObjects(portal.dataDir);
      const id = newSessionId();
      const { mp } = bodyOfSize(id, UPLOAD_LIMIT_BYTES + 1);
      const res = await postUpload(portal.url, LEGACY_KEY, mp);
      expect(res.status).toBe(413);
      expect(res.body).toStrictEqual({
        error:
          "Upload exceeds 25 MB: the whole request may be at most 26214400 bytes (the portal's upload limit, SVC_UPLOAD_MAX_MB)",
        limit_bytes: UPLOAD_LIMIT_BYTES,
      });
      expect(await row(id)).toBeUndefined();
      await expectNoLeftovers(objects);
    });

    it('one byte more sent chunked (no Content-Length): 413 and nothing stored', async () => {
      const objects = await blobObjects(portal.dataDir);
      const id = newSessionId();
      const { mp } = bodyOfSize(id, UPLOAD_LIMIT_BYTES + 1);
      const res = await rawRequest(`${portal.url}/api/upload`, {
        headers: { 'content-type': mp.contentType, 'x-api-key': LEGACY_KEY },
        chunks: slices(mp.body, 64 * 1024),
      });
      expect(res.status).toBe(413);
      expect(await row(id)).toBeUndefined();
      await expectNoLeftovers(objects);
    });

    it('a chunked body far over the limit: 413 while streaming, nothing stored', async () => {
      const objects = await blobObjects(portal.dataDir);
      const id = newSessionId();
      const boundary = newBoundary();
      const head = multipart(sessionParts(sessionDoc('session-minimal.json', id)), boundary).body;
      // Everything but the closing boundary, then an endless log part: the server must stop it.
      const opening = Buffer.concat([
        head.subarray(0, head.length - Buffer.byteLength(closing(boundary))),
        Buffer.from(partHeader(boundary, { name: 'pipeline_log', filename: 'pipeline.log' })),
      ]);
      const chunk = Buffer.alloc(256 * 1024, 'y');
      let sent = 0;
      const endless = function* () {
        yield opening;
        // Bounded only so a server that never stops cannot hang the test (160 MB).
        for (let i = 0; i < 640; i++) {
          sent += chunk.length;
          yield chunk;
        }
      };
      const res = await rawRequest(`${portal.url}/api/upload`, {
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'x-api-key': LEGACY_KEY },
        chunks: endless(),
      });
      expect(res.status).toBe(413);
      expect(sent).toBeLessThan(640 * chunk.length);
      expect(await row(id)).toBeUndefined();
      await expectNoLeftovers(objects);
    });
  });

  it('a client that goes away before the end of its request leaves nothing, even with every part complete', async () => {
    const objects = await blobObjects(portal.dataDir);
    const id = newSessionId();
    const mp = multipart(
      sessionParts(sessionDoc('session-minimal.json', id), { log: LOG, report: REPORT, exec: EXEC }),
    );
    const req = nodeHttp.request(`${portal.url}/api/upload`, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': mp.contentType, 'content-length': mp.body.length, 'x-api-key': LEGACY_KEY },
    });
    req.on('error', () => undefined);
    // Everything but the closing boundary's final "--\r\n": all four parts have ended.
    req.write(mp.body.subarray(0, mp.body.length - 4));
    const deadline = Date.now() + 30_000;
    // Wait until the portal has stored the three files, then hang up.
    while ((await blobObjects(portal.dataDir)).length < objects.length + 3) {
      if (Date.now() > deadline) throw new Error('the files were never stored');
      await new Promise((r) => setTimeout(r, 20));
    }
    req.destroy();
    // The portal either commits (wrong) or removes the files again (right): wait for one.
    while (
      (await row(id)) === undefined &&
      ((await blobObjects(portal.dataDir)).length !== objects.length || (await blobTmp(portal.dataDir)).length > 0)
    ) {
      if (Date.now() > deadline) throw new Error('the portal neither committed nor cleaned up');
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await row(id)).toBeUndefined();
    await expectNoLeftovers(objects);
  });

  it('a storage failure is a 500 and removes what was already stored', async () => {
    const objects = await blobObjects(portal.dataDir);
    const blobs = portal.ctx.blobs;
    const realPut = blobs.put.bind(blobs);
    let calls = 0;
    // The log and the report are stored; the exec summary's write fails.
    blobs.put = async (prefix, source) => {
      if (++calls === 3) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
      return realPut(prefix, source);
    };
    const id = newSessionId();
    let res: Awaited<ReturnType<typeof upload>>;
    try {
      res = await upload(LEGACY_KEY, sessionDoc('session-minimal.json', id), { log: LOG, report: REPORT, exec: EXEC });
    } finally {
      blobs.put = realPut;
    }
    expect(calls).toBe(3);
    expect(res.status).toBe(500);
    expect(res.body.error).toMatch(/^Storage failure/);
    expect(res.text).not.toContain('ENOSPC');
    expect(await row(id)).toBeUndefined();
    await expectNoLeftovers(objects);
  });

  describe('max_sessions of the key', () => {
    it('the third new session gets 403 Session limit reached (2); replacing one still works at the limit', async () => {
      const lic = await createLicense(portal, { tier: 'professional', max_sessions: 2 });
      const [a, b, c] = [newSessionId(), newSessionId(), newSessionId()];
      expect((await upload(lic.key, sessionDoc('session-minimal.json', a))).status).toBe(200);
      expect((await upload(lic.key, sessionDoc('session-minimal.json', b), { log: LOG })).status).toBe(200);

      const objects = await blobObjects(portal.dataDir);
      const third = await upload(lic.key, sessionDoc('session-minimal.json', c), { log: LOG, report: REPORT });
      expect(third.status).toBe(403);
      expect(third.body).toStrictEqual({ error: 'Session limit reached (2)' });
      expect(await row(c)).toBeUndefined();
      await expectNoLeftovers(objects);

      const again = await upload(lic.key, sessionDoc('session-minimal.json', a), { report: REPORT });
      expect(again.status, again.text).toBe(200);
      expect(again.body.message).toBe('Session replaced');
      expect(
        (await db.query('SELECT count(*)::int AS n FROM sessions WHERE license_id = $1', [lic.record.id])).rows[0].n,
      ).toBe(2);

      // Deleting one frees a slot.
      expect(
        (await http(portal.url, 'DELETE', `/api/sessions?session=${b}`, { headers: withToken(admin) })).status,
      ).toBe(200);
      expect((await upload(lic.key, sessionDoc('session-minimal.json', c))).status).toBe(200);
    });

    it('concurrent uploads at the limit: exactly max_sessions succeed', async () => {
      const lic = await createLicense(portal, { tier: 'professional', max_sessions: 3 });
      const objects = await blobObjects(portal.dataDir);
      const ids = Array.from({ length: 6 }, () => newSessionId());
      const results = await Promise.all(
        ids.map((id) => upload(lic.key, sessionDoc('session-minimal.json', id), { log: `${LOG}${id}\n` })),
      );
      const ok = results.filter((r) => r.status === 200);
      const refused = results.filter((r) => r.status === 403);
      expect(ok).toHaveLength(3);
      expect(refused).toHaveLength(3);
      for (const r of refused) expect(r.body).toStrictEqual({ error: 'Session limit reached (3)' });
      const stored = (await db.query('SELECT session_id, files FROM sessions WHERE license_id = $1', [lic.record.id]))
        .rows as { session_id: string; files: Record<string, { key: string }> }[];
      expect(stored.map((s) => s.session_id).sort()).toStrictEqual(ok.map((r) => r.body.session_id as string).sort());
      // Only the winners' files were kept.
      const keys = stored.flatMap((s) => Object.values(s.files).map((f) => f.key));
      expect(await blobObjects(portal.dataDir)).toStrictEqual([...objects, ...keys].sort());
      expect(await blobTmp(portal.dataDir)).toStrictEqual([]);
    });

    it('concurrent first uploads of one session id: one creates it, the rest replace it, none fails', async () => {
      const id = newSessionId();
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          upload(LEGACY_KEY, sessionDoc('session-minimal.json', id), { log: `log ${i}\n` }),
        ),
      );
      expect(results.map((r) => r.status)).toStrictEqual(results.map(() => 200));
      expect(results.filter((r) => r.body.message === 'Session uploaded')).toHaveLength(1);
      expect(new Set(results.map((r) => r.body.share_token)).size).toBe(1);
      const r = await row(id);
      expect(r!['version']).toBe(12);
    });
  });

  it('commitSession run concurrently for one new session id: exactly one creates it, none fails', async () => {
    // The HTTP test above rarely lines the commits up; this one starts them all at once.
    const id = newSessionId();
    const metadata = deriveMetadata({
      doc: sessionDoc('session-minimal.json', id),
      keyClientId: null,
      hasExecSummary: false,
    });
    const principal: LegacyPrincipal = { kind: 'legacy', tier: 'msp', clientId: null, permissions: new Set() };
    // Open every pool connection first, so no commit waits for a connection to be made.
    await Promise.all(Array.from({ length: 10 }, () => sql`SELECT pg_sleep(0.05)`.execute(portal.ctx.db)));
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () =>
        commitSession(portal.ctx, { principal, metadata, files: {}, facts: { scannedAt: null } }),
      ),
    );
    expect(results.filter((r) => r.status === 'rejected')).toStrictEqual([]);
    const values = results.map((r) => (r as PromiseFulfilledResult<Awaited<ReturnType<typeof commitSession>>>).value);
    expect(values.filter((v) => !v.replaced)).toHaveLength(1);
    expect(new Set(values.map((v) => v.shareToken)).size).toBe(1);
  });

  describe('scan_completed', () => {
    it('is audited with the documented data fields and published only after the writes', async () => {
      const lic = await createLicense(portal, { tier: 'business' });
      const id = newSessionId();
      let seen: { event: DomainEvent; visible: number; filesOnDisk: boolean } | null = null;
      let resolveSeen!: () => void;
      const published = new Promise<void>((r) => (resolveSeen = r));
      const unsubscribe = portal.ctx.events.subscribe(async (event) => {
        if (event.event_type !== 'scan_completed' || event.session_id !== id) return;
        // Looked at from inside the subscriber: the session must already be complete.
        const view = await detail(id);
        const r = await row(id);
        let filesOnDisk = r !== undefined;
        for (const f of Object.values((r?.['files'] ?? {}) as Record<string, { key: string }>))
          filesOnDisk &&= await fs.stat(blobPath(portal.dataDir, f.key)).then(
            () => true,
            () => false,
          );
        seen = { event, visible: view.status, filesOnDisk };
        resolveSeen();
      });
      let answeredUrl = '';
      try {
        const res = await upload(lic.key, sessionDoc('session-complete.json', id), { log: LOG, report: REPORT });
        expect(res.status).toBe(200);
        answeredUrl = res.body.share_url;
        await withTimeout(published, 30_000, 'scan_completed was not published');
      } finally {
        unsubscribe();
      }
      const got = seen as unknown as { event: DomainEvent; visible: number; filesOnDisk: boolean };
      expect(got.visible).toBe(200);
      expect(got.filesOnDisk).toBe(true);

      const audit = (
        await db.query("SELECT * FROM audit_events WHERE event_type = 'scan_completed' AND session_id = $1", [id])
      ).rows;
      expect(audit).toHaveLength(1);
      const a = audit[0];
      expect(a.client_id).toBe(lic.record.client_id);
      expect(a.actor).toBe(`license:${lic.record.id}`);
      const uploadedAt = (await row(id))!['uploaded_at'] as Date;
      const data = a.data as Record<string, unknown>;
      const expected = {
        session_id: id,
        client: 'Acme Water District',
        client_id: lic.record.client_id,
        target: '10.20.0.0/24',
        // The score of its findings by the current formula, as the listing shows it.
        risk_score: 75,
        risk_grade: 'D',
        total_findings: 6,
        total_hosts: 3,
        severity_summary: { critical: 1, high: 2, medium: 2, low: 1, info: 0 },
        // The audit log keeps no share token (the webhook's event has it: webhook-events.slow.test.ts).
        share_url: `${BASE_URL}/share/?token=[redacted]`,
        uploaded_at: uploadedAt.toISOString(),
        tool_version: '4.2.3',
      };
      expect(data).toMatchObject(expected);
      expect(Object.keys(data)).toEqual(expect.arrayContaining(Object.keys(expected)));

      expect(got.event).toMatchObject({
        id: Number(a.id),
        event_type: 'scan_completed',
        session_id: id,
        client_id: lic.record.client_id,
        actor: `license:${lic.record.id}`,
        // What subscribers hear carries the link itself, beside the data as audited.
        data: expected,
        secret_data: { share_url: answeredUrl },
      });
      expect(answeredUrl).toMatch(/^http:\/\/portal\.test\/share\/\?token=[0-9a-f]{64}$/);
    });

    it('a failed upload publishes and audits nothing', async () => {
      const events: DomainEvent[] = [];
      const unsubscribe = portal.ctx.events.subscribe((e) => void events.push(e));
      const id = newSessionId();
      try {
        expect((await upload(LEGACY_KEY, { metadata: { session_id: `${id}/..` } })).status).toBe(400);
        const lic = await createLicense(portal, { max_sessions: 1 });
        expect((await upload(lic.key, sessionDoc('session-minimal.json'))).status).toBe(200);
        expect((await upload(lic.key, sessionDoc('session-minimal.json', id))).status).toBe(403);
        await portal.ctx.events.drain();
      } finally {
        unsubscribe();
      }
      expect(events.filter((e) => e.event_type === 'scan_completed' && e.session_id === id)).toStrictEqual([]);
      expect(
        (
          await db.query(
            "SELECT count(*)::int AS n FROM audit_events WHERE event_type = 'scan_completed' AND session_id = $1",
            [id],
          )
        ).rows[0].n,
      ).toBe(0);
    });
  });

  it('other clients do not see the uploads of a scoped key through the listing', async () => {
    // Sanity check that client tagging is what listing scopes on (sessions.slow.test.ts has the full matrix).
    const client = uniqueClientId('scoped');
    const lic = await createLicense(portal, { client_id: client });
    const id = newSessionId();
    expect((await upload(lic.key, sessionDoc('session-minimal.json', id))).status).toBe(200);
    const res = await http(portal.url, 'GET', `/api/sessions?client_id=${client}`, { headers: withToken(admin) });
    expect(res.body.sessions.map((s: { session_id: string }) => s.session_id)).toStrictEqual([id]);
  });
});

function* slices(buf: Buffer, size: number): Generator<Buffer> {
  for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size);
}

async function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
