import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense, type LicenseFixture, uniqueClientId } from '../../../test-support/factories.ts';
import { http, withKey, withToken } from '../../../test-support/http.ts';
import { startTestPortal, type TestPortal } from '../../../test-support/portal.ts';
import { newSessionId, postUpload, sessionParts } from '../../../test-support/upload.ts';

/**
 * GET /api/sessions/latest-state (docs/decisions.md, "Issue 22: prior state from the portal"):
 * the client's newest session of a target with its remediation items, as stored (after
 * remediation updates), scoped like download.
 */

const TARGET = '10.9.0.0/24';
const FP = 'a'.repeat(64);
const OLD = '2025-01-01T00:00:00.000Z';

function doc(sessionId: string, clientId: string, note: string) {
  return {
    metadata: { session_id: sessionId, client_id: clientId, target: TARGET, finished_at: '2025-02-01T10:00:00.000Z' },
    summary: { risk_score: 40, risk_grade: 'C', total_findings: 1, total_hosts: 1 },
    findings: [{ id: 'F1', title: 'Telnet open', severity: 'high', host: '10.9.0.5', port: 23, fingerprint: FP }],
    remediation: [
      {
        title: 'Telnet open',
        severity: 'high',
        finding_id: 'F1',
        fingerprint: FP,
        host: '10.9.0.5',
        status: 'persistent',
        status_changed: OLD,
        note,
        first_seen: '20250101_000000',
        prior_status: 'new',
        exception_status: 'accepted',
        exception_reason: 'compensating control',
        exception_approver: 'ciso@acme.test',
        exception_approved_at: OLD,
        exception_expiry: '2099-12-31',
      },
    ],
    remediation_resolved: [
      { title: 'Old FTP', severity: 'medium', host: '10.9.0.6', status: 'resolved', status_changed: OLD, note: 'x' },
    ],
  };
}

describe('GET /api/sessions/latest-state', () => {
  let portal: TestPortal;
  let keyA: LicenseFixture;
  let keyB: LicenseFixture;
  let admin: string;
  const first = newSessionId();
  const latest = newSessionId();

  const get = (query: string, headers: Record<string, string> = {}) =>
    http(portal.url, 'GET', `/api/sessions/latest-state?${query}`, { headers });
  async function upload(key: string, sessionId: string, clientId: string, note: string) {
    const res = await postUpload(portal.url, key, sessionParts(doc(sessionId, clientId, note)));
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.text}`);
  }

  beforeAll(async () => {
    portal = await startTestPortal();
    admin = await portal.adminToken();
    keyA = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('acme') });
    keyB = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('beta') });
    await upload(keyA.key, first, keyA.record.client_id, 'first');
    await upload(keyA.key, latest, keyA.record.client_id, 'latest');
  });
  afterAll(async () => {
    await portal?.close();
    if (portal) await fs.rm(portal.dataDir, { recursive: true, force: true });
  });

  it("a key gets its client's newest session of the target, with every remediation field", async () => {
    const res = await get(`target=${encodeURIComponent(TARGET)}`, withKey(keyA.key));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      session_id: latest,
      client_id: keyA.record.client_id,
      target: TARGET,
      uploaded_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      scanned_at: '2025-02-01T10:00:00.000Z',
      remediation: [
        {
          fingerprint: FP,
          title: 'Telnet open',
          host: '10.9.0.5',
          port: 23,
          severity: 'high',
          status: 'persistent',
          status_changed: OLD,
          note: 'latest',
          first_seen: '20250101_000000',
          prior_status: 'new',
          exception_status: 'accepted',
          exception_reason: 'compensating control',
          exception_approver: 'ciso@acme.test',
          exception_approved_at: OLD,
          exception_expiry: '2099-12-31',
        },
      ],
      remediation_resolved: [
        {
          fingerprint: null,
          title: 'Old FTP',
          host: '10.9.0.6',
          port: null,
          severity: 'medium',
          status: 'resolved',
          status_changed: OLD,
          note: 'x',
          first_seen: null,
          prior_status: null,
          exception_status: null,
          exception_reason: null,
          exception_approver: null,
          exception_approved_at: null,
          exception_expiry: null,
        },
      ],
    });
  });

  it('reflects a remediation update of the stored file', async () => {
    const upd = await http(portal.url, 'PATCH', '/api/remediation-update', {
      headers: withToken(admin),
      json: {
        session_id: latest,
        client_id: keyA.record.client_id,
        items: [{ title: 'Telnet open', status: 'in_progress', note: 'ticket 7' }],
      },
    });
    expect(upd.status, upd.text).toBe(200);
    const res = await get(`target=${encodeURIComponent(TARGET)}`, withKey(keyA.key));
    expect(res.status).toBe(200);
    expect(res.body.remediation[0]).toMatchObject({ status: 'in_progress', note: 'ticket 7' });
    expect(res.body.remediation[0].status_changed).not.toBe(OLD);
  });

  it("another client's target is a 404, like a target never uploaded", async () => {
    const other = await get(`target=${encodeURIComponent(TARGET)}`, withKey(keyB.key));
    expect(other.status).toBe(404);
    expect(other.body).toEqual({ error: 'No session of this target' });
    const none = await get('target=10.200.0.0%2F24', withKey(keyA.key));
    expect(none.status).toBe(404);
    expect(none.body).toEqual({ error: 'No session of this target' });
    const named = await get(
      `target=${encodeURIComponent(TARGET)}&client_id=${keyA.record.client_id}`,
      withKey(keyB.key),
    );
    expect(named.status).toBe(404);
    expect(named.body).toEqual({ error: 'Session not found' });
  });

  it('an admin JWT names the client', async () => {
    const res = await get(`target=${encodeURIComponent(TARGET)}&client_id=${keyA.record.client_id}`, withToken(admin));
    expect(res.status, res.text).toBe(200);
    expect(res.body.session_id).toBe(latest);
    const otherClient = await get(
      `target=${encodeURIComponent(TARGET)}&client_id=${keyB.record.client_id}`,
      withToken(admin),
    );
    expect(otherClient.status).toBe(404);
    const unnamed = await get(`target=${encodeURIComponent(TARGET)}`, withToken(admin));
    expect(unnamed.status).toBe(400);
    expect(unnamed.body).toEqual({
      error: 'Missing client_id parameter: name the client whose target is asked for',
    });
  });

  it('bad requests: no target 400, no credential 401, a wrong key 403 (as everywhere)', async () => {
    const noTarget = await get('', withKey(keyA.key));
    expect(noTarget.status).toBe(400);
    expect(noTarget.body).toEqual({ error: 'Missing target parameter' });
    const anon = await get(`target=${encodeURIComponent(TARGET)}`);
    expect(anon.status).toBe(401);
    const wrong = await get(`target=${encodeURIComponent(TARGET)}`, withKey('not-a-key-0123456789'));
    expect(wrong.status).toBe(403);
  });
});
