import fs from 'node:fs/promises';
import { findingFingerprint } from '@svc/protocol/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense, type LicenseFixture, uniqueClientId } from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { newSessionId, postUpload, sessionParts } from '@svc/test-support/upload';

/**
 * GET /api/sessions/latest-state (docs/findings-of-record.md#the-next-scan): the findings of
 * record of a client's target, open and resolved, with what people decided; scoped like download.
 */

const TARGET = '10.9.0.0/24';
const FP = findingFingerprint({ rule_id: 'telnet-open', host: '10.9.0.5', port: 23, protocol: 'tcp' });
const FP_FTP = findingFingerprint({ rule_id: 'ftp-anonymous', host: '10.9.0.6', port: 21, protocol: 'tcp' });
const OLD = '2025-01-01T00:00:00.000Z';

/** The first session also found anonymous FTP; the latest looked at both hosts and did not. */
function doc(sessionId: string, clientId: string, note: string, finishedAt: string, withFtp: boolean) {
  const ftp = {
    id: 'F2',
    rule_id: 'ftp-anonymous',
    title: 'Old FTP',
    severity: 'medium',
    host: '10.9.0.6',
    port: 21,
    protocol: 'tcp',
  };
  return {
    metadata: { session_id: sessionId, client_id: clientId, target: TARGET, finished_at: finishedAt },
    summary: { risk_score: 40, risk_grade: 'C', total_findings: 1, total_hosts: 1 },
    coverage: { hosts: ['10.9.0.5', '10.9.0.6'], ports: { tcp: '1-1024' } },
    findings: [
      {
        id: 'F1',
        rule_id: 'telnet-open',
        title: 'Telnet open',
        severity: 'high',
        host: '10.9.0.5',
        port: 23,
        protocol: 'tcp',
        fingerprint: FP,
      },
      ...(withFtp ? [ftp] : []),
    ],
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
    remediation_resolved: [],
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
  async function upload(key: string, sessionId: string, clientId: string, note: string, at: string, withFtp: boolean) {
    const res = await postUpload(portal.url, key, sessionParts(doc(sessionId, clientId, note, at, withFtp)));
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.text}`);
  }

  beforeAll(async () => {
    portal = await startTestPortal();
    admin = await portal.adminToken();
    keyA = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('acme') });
    keyB = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('beta') });
    await upload(keyA.key, first, keyA.record.client_id, 'first', '2025-01-15T10:00:00.000Z', true);
    await upload(keyA.key, latest, keyA.record.client_id, 'latest', '2025-02-01T10:00:00.000Z', false);
  });
  afterAll(async () => {
    await portal?.close();
    if (portal) await fs.rm(portal.dataDir, { recursive: true, force: true });
  });

  it("a key gets its client's findings of record of the target, with every remediation field", async () => {
    const res = await get(`target=${encodeURIComponent(TARGET)}`, withKey(keyA.key));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      session_id: latest,
      client_id: keyA.record.client_id,
      target: TARGET,
      uploaded_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      scanned_at: '2025-02-01T10:00:00.000Z',
      session_stored: true,
      remediation: [
        {
          fingerprint: FP,
          title: 'Telnet open',
          host: '10.9.0.5',
          port: 23,
          protocol: 'tcp',
          severity: 'high',
          // Its first session's file said persistent (seen before it): that is the record's status since.
          status: 'persistent',
          status_changed: '2025-01-15T10:00:00.000Z',
          status_source: 'scan',
          note: 'latest',
          first_seen: '20250101_000000',
          prior_status: null,
          // The business key's file set it: shown as set by that key, the named approver apart.
          exception_status: 'accepted',
          exception_reason: 'compensating control',
          exception_approver: `license:${keyA.record.id}`,
          exception_approved_at: OLD,
          exception_expiry: '2099-12-31',
          exception_source: 'upload',
          exception_claimed_approver: 'ciso@acme.test',
          disposition: null,
          disposition_reason: null,
          disposition_by: null,
          disposition_at: null,
          last_seen: latest,
          resolved_at: null,
          reopened_at: null,
        },
      ],
      remediation_resolved: [
        expect.objectContaining({
          fingerprint: FP_FTP,
          title: 'Old FTP',
          host: '10.9.0.6',
          port: 21,
          severity: 'medium',
          status: 'resolved',
          status_changed: '2025-02-01T10:00:00.000Z',
          status_source: 'scan',
          first_seen: first,
          prior_status: 'new',
          exception_status: null,
          last_seen: first,
          resolved_at: '2025-02-01T10:00:00.000Z',
        }),
      ],
    });
  });

  it('reflects a remediation update', async () => {
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

  it('asking for targets never uploaded, and an upload refused, leave no target behind', async () => {
    const asked = ['10.201.0.0/24', '10.202.0.0/24', 'typo.example'];
    for (const target of asked)
      expect((await get(`target=${encodeURIComponent(target)}`, withKey(keyA.key))).status).toBe(404);
    // Another target under a session id that holds TARGET: 409, nothing stored.
    const moved = doc(first, keyA.record.client_id, 'moved', '2025-02-02T10:00:00.000Z', false);
    moved.metadata.target = '10.203.0.0/24';
    const refused = await postUpload(portal.url, keyA.key, sessionParts(moved));
    expect(refused.status, refused.text).toBe(409);
    const targets = await http(portal.url, 'GET', `/api/targets?client_id=${keyA.record.client_id}`, {
      headers: withToken(admin),
    });
    expect(targets.status).toBe(200);
    expect(targets.body.targets.map((t: { target: string }) => t.target)).toEqual([TARGET]);
    // Still a 404, not a target with no session.
    expect((await get(`target=${encodeURIComponent('10.203.0.0/24')}`, withKey(keyA.key))).status).toBe(404);
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
