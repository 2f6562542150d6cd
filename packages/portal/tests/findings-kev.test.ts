import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense, type LicenseFixture, uniqueClientId } from '@svc/test-support/factories';
import { http, withToken } from '@svc/test-support/http';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { newSessionId, postUpload, sessionParts } from '@svc/test-support/upload';
import { KEV_FINDING } from '@svc/test-support/vuln-index';

/** The findings API with the prioritisation fields (docs/vuln-matching.md): kev, EPSS, and the kev filter. */

const doc = (sessionId: string, clientId: string) => ({
  metadata: { session_id: sessionId, client_id: clientId, target: '10.0.0.0/24' },
  findings: [
    KEV_FINDING,
    // Out of range values are not shown.
    { rule_id: 'x', title: 'Plain', severity: 'medium', host: '10.0.0.3', kev: 'yes', epss: 2, kev_date_added: 'soon' },
  ],
});

describe('findings with KEV and EPSS', () => {
  let portal: TestPortal;
  let key: LicenseFixture;
  let admin: string;
  const sid = newSessionId();
  const list = (query: string) =>
    http(portal.url, 'GET', `/api/sessions/${sid}/findings?client_id=${key.record.client_id}&${query}`, {
      headers: withToken(admin),
    });

  beforeAll(async () => {
    portal = await startTestPortal();
    admin = await portal.adminToken();
    key = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('kev') });
    const res = await postUpload(portal.url, key.key, sessionParts(doc(sid, key.record.client_id)));
    expect(res.status, res.text).toBe(200);
  });
  afterAll(async () => {
    await portal?.close();
    if (portal) await fs.rm(portal.dataDir, { recursive: true, force: true });
  });

  it('answers kev, the catalogue date and EPSS in rows and the detail', async () => {
    const res = await list('');
    expect(res.status).toBe(200);
    const rows = (res.body as { findings: Record<string, unknown>[] }).findings;
    expect(rows.map((r) => [r['title'], r['kev'], r['kev_date_added'], r['epss'], r['epss_percentile']])).toEqual([
      [KEV_FINDING.title, true, '2025-01-10', 0.42, 0.971],
      ['Plain', false, null, null, null],
    ]);
    const detail = await http(portal.url, 'GET', `/api/sessions/${sid}/findings/0?client_id=${key.record.client_id}`, {
      headers: withToken(admin),
    });
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({ kev: true, kev_date_added: '2025-01-10', epss: 0.42, epss_percentile: 0.971 });
  });

  it('filters on kev, and refuses another value with the findings query error', async () => {
    const titles = async (q: string) =>
      ((await list(q)).body as { findings: { title: string }[] }).findings.map((f) => f.title);
    expect(await titles('kev=true')).toEqual([KEV_FINDING.title]);
    expect(await titles('kev=false')).toEqual(['Plain']);
    const bad = await list('kev=yes');
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'Invalid query: kev must be equal to constant' });
  });
});
