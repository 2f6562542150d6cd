import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense, createScopedUser, licenseAction, type LicenseFixture } from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { LEGACY_KEY, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { newSessionId, postUpload, sessionParts, type SessionFiles } from '@svc/test-support/upload';

/** GET /api/download (docs/api.md#sessions, section 5): files, headers, credentials and scope. */

const HTML_CSP =
  "sandbox allow-scripts; default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'; font-src data:; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";
const INERT_CSP = "sandbox; default-src 'none'; frame-ancestors 'none'";
const LOG = 'stage nmap ok\nstage report ok\n';
const REPORT =
  '<!doctype html><html><body><div id="consultation-section" class="consultation-section"><button id="scheduleBtn">Book</button></div><script>var t = "</body>";</script></body></html>';
const EXEC = '<!doctype html><html><body><h1>Exec – Übersicht</h1></body></html>';

function sessionJson(sessionId: string, client: string) {
  return {
    metadata: { session_id: sessionId, client, target: '10.1.0.0/24' },
    summary: { risk_score: 42, risk_grade: 'C', total_findings: 2, total_hosts: 1 },
  };
}

describe('GET /api/download', () => {
  let portal: TestPortal;
  let keyA: LicenseFixture;
  let keyB: LicenseFixture;
  /** Client A: every file. */
  const full = newSessionId();
  /** Client A: session_results.json only. */
  const bare = newSessionId();
  /** Client B. */
  const other = newSessionId();
  const tokens: Record<string, string> = {};

  async function upload(key: string, sessionId: string, client: string, files: SessionFiles = {}) {
    const res = await postUpload(portal.url, key, sessionParts(sessionJson(sessionId, client), files));
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.text}`);
    tokens[sessionId] = res.body.share_token;
  }
  const get = (query: string, headers: Record<string, string> = {}) =>
    http(portal.url, 'GET', `/api/download?${query}`, { headers });

  beforeAll(async () => {
    portal = await startTestPortal();
    keyA = await createLicense(portal, { tier: 'professional' });
    keyB = await createLicense(portal, { tier: 'professional' });
    await upload(keyA.key, full, 'Acme', { log: LOG, report: REPORT, exec: EXEC });
    await upload(keyA.key, bare, 'Acme');
    await upload(keyB.key, other, 'Beta');
  });
  afterAll(async () => {
    await portal?.close();
    if (portal) await fs.rm(portal.dataDir, { recursive: true, force: true });
  });

  describe('files and headers', () => {
    it('session_results.json by default, as an attachment, with our content type and length', async () => {
      const res = await get(`session=${full}`, withKey(keyA.key));
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(res.text)));
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${full}_session_results.json"`);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('cache-control')).toBe('private, no-store');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('content-security-policy')).toBe(INERT_CSP);
      // The stored file: the upload tagged it with the key's client_id.
      expect(res.body).toEqual({
        ...sessionJson(full, 'Acme'),
        metadata: { ...sessionJson(full, 'Acme').metadata, client_id: keyA.record.client_id },
      });
    });

    it('session_results.json states the current triage; as_uploaded=true serves the evidence as stored', async () => {
      const id = newSessionId();
      const doc = {
        metadata: { session_id: id, client: 'Acme', target: '10.1.0.9' },
        summary: { risk_score: 99, risk_grade: 'F', total_findings: 1, total_hosts: 1 },
        findings: [
          { id: 'F1', rule_id: 'svc-telnet', title: 'Telnet open', severity: 'high', host: '10.1.0.9', port: 23 },
        ],
        remediation: [{ finding_id: 'F1', title: 'Telnet open', status: 'in_progress', note: 'claimed by the file' }],
      };
      const up = await postUpload(portal.url, keyA.key, sessionParts(doc));
      expect(up.status).toBe(200);
      const stored = { ...doc, metadata: { ...doc.metadata, client_id: keyA.record.client_id } };

      const raw = await get(`session=${id}&as_uploaded=true`, withKey(keyA.key));
      expect(raw.status).toBe(200);
      expect(raw.headers.get('content-length')).toBe(String(Buffer.byteLength(raw.text)));
      expect(raw.body).toEqual(stored);

      const served = await get(`session=${id}&as_uploaded=false`, withKey(keyA.key));
      expect(served.status).toBe(200);
      // The portal's triage: a first upload's claim of a status is a claim, the finding is new.
      expect(served.body.remediation).toMatchObject([{ title: 'Telnet open', status: 'new', port: 23 }]);
      expect(served.body.metadata.triage_as_of).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(served.body.summary.risk_score).not.toBe(99);
    });

    it('report.html with mode=view: inline, byte for byte, in a sandbox CSP (opaque origin)', async () => {
      const res = await get(`session=${full}&file=report.html&mode=view`, withKey(keyA.key));
      expect(res.status).toBe(200);
      expect(res.text).toBe(REPORT);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(REPORT)));
      expect(res.headers.get('content-disposition')).toBe('inline');
      expect(res.headers.get('content-security-policy')).toBe(HTML_CSP);
      expect(res.headers.get('content-security-policy')).not.toContain('allow-same-origin');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('cache-control')).toBe('private, no-store');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
    });

    it('exec_summary.html as an attachment, still sandboxed', async () => {
      const res = await get(`session=${full}&file=exec_summary.html`, withKey(keyA.key));
      expect(res.status).toBe(200);
      expect(res.text).toBe(EXEC);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(EXEC)));
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${full}_exec_summary.html"`);
      expect(res.headers.get('content-security-policy')).toBe(HTML_CSP);
    });

    it('pipeline.log as text/plain; mode=download is an attachment too', async () => {
      const res = await get(`session=${full}&file=pipeline.log&mode=download`, withKey(keyA.key));
      expect(res.status).toBe(200);
      expect(res.text).toBe(LOG);
      expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(res.headers.get('content-length')).toBe(String(LOG.length));
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${full}_pipeline.log"`);
      expect(res.headers.get('content-security-policy')).toBe(INERT_CSP);
    });

    it('HEAD answers the same headers without a body', async () => {
      const res = await fetch(`${portal.url}/api/download?session=${full}&file=report.html&mode=view`, {
        method: 'HEAD',
        headers: withKey(keyA.key),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(REPORT)));
      expect(res.headers.get('content-security-policy')).toBe(HTML_CSP);
      expect(await res.text()).toBe('');
    });
  });

  describe('400 before any lookup', () => {
    const cases: [string, string][] = [
      ['file=report.html', 'Missing session parameter'],
      ['session=', 'Missing session parameter'],
      ['session=..%2Fetc', 'Invalid session parameter: must match ^[a-zA-Z0-9_-]+$'],
      // NUL is refused by the edge rule for every route, before the route's own checks.
      ['session=a%00b', 'Invalid query: field contains a NUL character (at session)'],
      [
        'session=SESSION&file=..%2F..%2Fetc%2Fpasswd',
        'Invalid file parameter: must be one of session_results.json, pipeline.log, report.html, exec_summary.html',
      ],
      [
        'session=SESSION&file=report_20250101.html',
        'Invalid file parameter: must be one of session_results.json, pipeline.log, report.html, exec_summary.html',
      ],
      [
        'session=SESSION&file=REPORT.HTML',
        'Invalid file parameter: must be one of session_results.json, pipeline.log, report.html, exec_summary.html',
      ],
      ['session=SESSION&mode=open', 'Invalid mode parameter: must be view or download'],
      ['session=SESSION&token=abc', 'Invalid token parameter: must be 64 hex characters'],
      ['session=SESSION&as_uploaded=yes', 'Invalid as_uploaded parameter: must be true or false'],
    ];
    for (const [query, error] of cases) {
      it(`${query} → 400 ${error}`, async () => {
        const res = await get(query.replace('SESSION', full), withKey(keyA.key));
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error });
      });
    }
    it('a file name check does not depend on the credential (no key at all: still 400)', async () => {
      const res = await get(`session=${full}&file=secrets.txt`);
      expect(res.status).toBe(400);
    });
  });

  describe('404', () => {
    it('a file the session does not have', async () => {
      for (const file of ['report.html', 'exec_summary.html', 'pipeline.log']) {
        const res = await get(`session=${bare}&file=${file}`, withKey(keyA.key));
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ error: `File not found: ${file}` });
      }
    });
    it('a session that does not exist', async () => {
      const res = await get(`session=${newSessionId()}`, withKey(keyA.key));
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Session not found' });
    });
  });

  describe('credentials and scope', () => {
    it('no credential: 401', async () => {
      const res = await get(`session=${full}`);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'Unauthorized' });
    });

    it('an invalid or revoked key: 403 with the key message', async () => {
      const bad = await get(`session=${full}`, withKey(`svc_pro_${'0'.repeat(64)}`));
      expect(bad.status).toBe(403);
      expect(bad.body).toEqual({ error: 'Invalid API key' });
      const revoked = await createLicense(portal, { tier: 'professional', client_id: keyA.record.client_id });
      await licenseAction(portal, revoked.record.id, 'revoke');
      const res = await get(`session=${full}`, withKey(revoked.key));
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'License key has been revoked' });
    });

    it('a key of another client: the same 404 as a missing session', async () => {
      const res = await get(`session=${full}&file=report.html`, withKey(keyB.key));
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Session not found' });
      const mine = await get(`session=${other}`, withKey(keyB.key));
      expect(mine.status).toBe(200);
    });

    it('another key of the same client may download', async () => {
      const second = await createLicense(portal, { tier: 'business', client_id: keyA.record.client_id });
      const res = await get(`session=${full}&file=pipeline.log`, withKey(second.key));
      expect(res.status).toBe(200);
      expect(res.text).toBe(LOG);
    });

    it('the legacy key may download any session', async () => {
      for (const id of [full, other]) expect((await get(`session=${id}`, withKey(LEGACY_KEY))).status).toBe(200);
    });

    it('admin JWT: any session; a scoped user only its clients', async () => {
      const admin = await portal.adminToken();
      expect((await get(`session=${other}&file=session_results.json`, withToken(admin))).status).toBe(200);
      const userA = await createScopedUser(portal, [keyA.record.client_id]);
      const inScope = await get(`session=${full}&file=exec_summary.html&mode=view`, withToken(userA.token));
      expect(inScope.status).toBe(200);
      expect(inScope.text).toBe(EXEC);
      const outOfScope = await get(`session=${other}`, withToken(userA.token));
      expect(outOfScope.status).toBe(404);
      expect(outOfScope.body).toEqual({ error: 'Session not found' });
    });

    it("the session's share token works without any other credential", async () => {
      const res = await get(`session=${full}&file=report.html&mode=view&token=${tokens[full]}`);
      expect(res.status).toBe(200);
      expect(res.text).toBe(REPORT);
      expect(res.headers.get('content-security-policy')).toBe(HTML_CSP);
      const upper = await get(`session=${full}&file=pipeline.log&token=${tokens[full]!.toUpperCase()}`);
      expect(upper.status).toBe(200);
    });

    it("another session's share token is refused with the same 404 as a wrong one", async () => {
      for (const token of [tokens[other]!, tokens[bare]!, 'f'.repeat(64)]) {
        const res = await get(`session=${full}&file=report.html&token=${token}`);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ error: 'Session not found' });
      }
      // And a share token cannot reach a session that does not exist either.
      const res = await get(`session=${newSessionId()}&token=${tokens[full]}`);
      expect(res.status).toBe(404);
    });

    it('a share token with a key of another client: the key decides (404, as for a missing session)', async () => {
      const res = await get(`session=${full}&token=${tokens[full]}`, withKey(keyB.key));
      expect([res.status, res.body]).toEqual([404, { error: 'Session not found' }]);
    });
  });
});
