import fs from 'node:fs/promises';
import { CSV_COLUMNS, findingFingerprint } from '@svc/protocol/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense, createScopedUser, type LicenseFixture, uniqueClientId } from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { newSessionId, postUpload, sessionParts } from '@svc/test-support/upload';

/**
 * GET /api/sessions/{session_id}/export: the stored session's findings as CSV, SARIF and
 * DefectDojo JSON, with the download's headers and scope, and the remediation state of the
 * moment (an exception set through the API is in the next export).
 */

const FP_PG = findingFingerprint({ rule_id: 'pg-open', host: '10.0.0.2', port: 5432, protocol: 'tcp' });
const FP_SSH = findingFingerprint({ rule_id: 'ssh-weak', host: '10.0.0.10', port: 22, protocol: 'tcp' });

const doc = (sessionId: string, clientId: string) => ({
  metadata: { session_id: sessionId, client_id: clientId, target: '10.0.0.0/24', finished_at: '2026-03-01T10:00:00Z' },
  findings: [
    {
      id: 'F0',
      rule_id: 'pg-open',
      title: 'PostgreSQL reachable',
      severity: 'critical',
      host: '10.0.0.2',
      port: 5432,
      protocol: 'tcp',
      cvss: 9.8,
      kev: true,
      epss: 0.5,
    },
    {
      id: 'F1',
      rule_id: 'ssh-weak',
      title: '=SSH weak ciphers',
      severity: 'high',
      host: '10.0.0.10',
      port: 22,
      protocol: 'tcp',
    },
  ],
  remediation: [
    { title: 'PostgreSQL reachable', fingerprint: FP_PG, host: '10.0.0.2', status: 'in_progress' },
    { title: '=SSH weak ciphers', fingerprint: FP_SSH, host: '10.0.0.10', status: 'new' },
  ],
});

describe('GET /api/sessions/{session_id}/export', () => {
  let portal: TestPortal;
  let keyA: LicenseFixture;
  let keyB: LicenseFixture;
  let admin: string;
  const sid = newSessionId();
  const exportOf = (query: string, headers: Record<string, string>) =>
    http(portal.url, 'GET', `/api/sessions/${sid}/export?${query}`, { headers });

  beforeAll(async () => {
    portal = await startTestPortal();
    admin = await portal.adminToken();
    keyA = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('acme') });
    keyB = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('beta') });
    const res = await postUpload(portal.url, keyA.key, sessionParts(doc(sid, keyA.record.client_id)));
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.text}`);
  });
  afterAll(async () => {
    await portal?.close();
    if (portal) await fs.rm(portal.dataDir, { recursive: true, force: true });
  });

  it('CSV: text/csv in UTF-8, an attachment named after the session, formulas neutralised, links to the console', async () => {
    const res = await exportOf('format=csv', withToken(admin));
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${sid}_findings.csv"`);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    const lines = res.text.split('\r\n');
    expect(lines[0]).toBe(CSV_COLUMNS.join(','));
    expect(lines).toHaveLength(4);
    expect(lines[1]).toMatch(new RegExp(`^${FP_PG},${sid},F0,pg-open,PostgreSQL reachable,critical,9.8,true,,0.5,`));
    expect(lines[1]).toContain(',in_progress,');
    expect(lines[2]).toMatch(new RegExp(`^${FP_SSH},${sid},F1,ssh-weak,'=SSH weak ciphers,high,`));
    // The portal's configured base URL and the session view's address.
    expect(lines[1]?.endsWith(`,http://portal.test/collect/?session=${sid}&client_id=${keyA.record.client_id},,`)).toBe(
      true,
    );
  });

  it('SARIF and DefectDojo: their content types, stable identities, and an exception set through the API', async () => {
    const patch = await http(portal.url, 'PATCH', '/api/remediation-update', {
      headers: withToken(admin),
      json: {
        session_id: sid,
        client_id: keyA.record.client_id,
        items: [{ fingerprint: FP_SSH, exception: { reason: 'legacy clients', expiry: '2099-06-30' } }],
      },
    });
    expect(patch.status, patch.text).toBe(200);

    const sarif = await exportOf(`format=sarif&client_id=${keyA.record.client_id}`, withKey(keyA.key));
    expect(sarif.status, sarif.text).toBe(200);
    expect(sarif.headers.get('content-type')).toBe('application/sarif+json');
    expect(sarif.headers.get('content-disposition')).toBe(`attachment; filename="${sid}_findings.sarif"`);
    const log = JSON.parse(sarif.text) as {
      version: string;
      runs: { results: { ruleId: string; partialFingerprints: Record<string, string>; suppressions?: unknown[] }[] }[];
    };
    expect(log.version).toBe('2.1.0');
    const results = log.runs[0]!.results;
    expect(results.map((r) => [r.ruleId, Object.values(r.partialFingerprints)[0]])).toEqual([
      ['pg-open', FP_PG],
      ['ssh-weak', FP_SSH],
    ]);
    expect(results[0]!.suppressions).toBeUndefined();
    expect(results[1]!.suppressions).toEqual([
      { kind: 'external', status: 'accepted', justification: 'legacy clients' },
    ]);

    const dojo = await exportOf('format=defectdojo', withToken(admin));
    expect(dojo.status, dojo.text).toBe(200);
    expect(dojo.headers.get('content-type')).toBe('application/json');
    expect(dojo.headers.get('content-disposition')).toBe(`attachment; filename="${sid}_defectdojo.json"`);
    const findings = (dojo.body as { findings: Record<string, unknown>[] }).findings;
    expect(findings.map((f) => [f['unique_id_from_tool'], f['severity'], f['active'], f['risk_accepted']])).toEqual([
      [FP_PG, 'Critical', true, false],
      [FP_SSH, 'High', false, true],
    ]);
    expect(findings[0]).toMatchObject({ known_exploited: true, epss_score: 0.5, date: '2026-03-01' });
  });

  it('keeps only http(s) reference URLs in every format (docs/exports.md#reference-urls)', async () => {
    const other = newSessionId();
    const hostile = ['javascript:alert(1)', ' JaVaScRiPt:alert(1)', 'data:text/html,x', '\tvbscript:msgbox(1)'];
    const base = doc(other, keyA.record.client_id);
    const withUrls = {
      ...base,
      findings: [{ ...base.findings[0], references: { urls: [...hostile, 'HTTPS://Vendor.Example/kb'] } }],
    };
    const up = await postUpload(portal.url, keyA.key, sessionParts(withUrls));
    expect(up.status, up.text).toBe(200);
    const get = (format: string) =>
      http(portal.url, 'GET', `/api/sessions/${other}/export?format=${format}`, { headers: withToken(admin) });
    const [csv, sarif, dojo] = await Promise.all([get('csv'), get('sarif'), get('defectdojo')]);
    expect(csv.text.split('\r\n')[1]).toContain(',https://vendor.example/kb,');
    const rule = JSON.parse(sarif.text).runs[0].tool.driver.rules[0];
    expect([rule.helpUri, rule.help]).toEqual(['https://vendor.example/kb', { text: 'https://vendor.example/kb' }]);
    expect(dojo.body.findings[0].references).toBe(
      `https://vendor.example/kb\nhttp://portal.test/collect/?session=${other}&client_id=${keyA.record.client_id}`,
    );
    for (const text of [csv.text, sarif.text, dojo.text]) expect(text.toLowerCase()).not.toMatch(/script:|data:/);
  });

  it('carries every CVE and CWE of a finding into every format', async () => {
    const other = newSessionId();
    const base = doc(other, keyA.record.client_id);
    const cves = ['CVE-2016-10009', 'CVE-2016-10010', 'CVE-2016-10012'];
    const withRefs = {
      ...base,
      findings: [{ ...base.findings[0], references: { cve: cves, cwe: ['CWE-284', 'CWE-264'] } }],
    };
    const up = await postUpload(portal.url, keyA.key, sessionParts(withRefs));
    expect(up.status, up.text).toBe(200);
    const get = (format: string) =>
      http(portal.url, 'GET', `/api/sessions/${other}/export?format=${format}`, { headers: withToken(admin) });
    const [csv, sarif, dojo] = await Promise.all([get('csv'), get('sarif'), get('defectdojo')]);
    const row = csv.text.split('\r\n')[1]!.split(',');
    expect([row[CSV_COLUMNS.indexOf('cve')], row[CSV_COLUMNS.indexOf('cwe')]]).toEqual([
      cves.join('; '),
      'CWE-284; CWE-264',
    ]);
    const result = JSON.parse(sarif.text).runs[0].results[0];
    expect(result.properties.cve).toEqual(cves);
    expect(result.taxa.map((t: { id: string }) => t.id)).toEqual(['284', '264']);
    expect(dojo.body.findings[0]).toMatchObject({
      cve: cves[0],
      vulnerability_ids: cves,
      cwe: 284,
      cwes: [284, 264],
    });
  });

  it('400 for an unknown or missing format and a bad id, before any credential check', async () => {
    const bad = await exportOf('format=xlsx', {});
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'Invalid format parameter: must be one of csv, sarif, defectdojo' });
    const missing = await http(portal.url, 'GET', `/api/sessions/${sid}/export`, { headers: withToken(admin) });
    expect(missing.status).toBe(400);
    expect(typeof missing.body.error).toBe('string');
    const badId = await http(portal.url, 'GET', '/api/sessions/a.b/export?format=csv', { headers: withToken(admin) });
    expect(badId.status).toBe(400);
    expect(badId.body).toEqual({ error: 'Invalid session_id parameter: must match ^[a-zA-Z0-9_-]+$' });
  });

  it('is scoped like download: 401 without a credential, 404 for another client or an unknown session', async () => {
    expect((await exportOf('format=csv', {})).status).toBe(401);
    const other = await exportOf('format=csv', withKey(keyB.key));
    expect(other.status).toBe(404);
    expect(other.body).toEqual({ error: 'Session not found' });
    const userA = await createScopedUser(portal, [keyA.record.client_id]);
    const userB = await createScopedUser(portal, [keyB.record.client_id]);
    expect((await exportOf('format=sarif', withToken(userA.token))).status).toBe(200);
    expect((await exportOf('format=sarif', withToken(userB.token))).status).toBe(404);
    expect((await exportOf(`format=sarif&client_id=${keyA.record.client_id}`, withToken(userB.token))).status).toBe(
      404,
    );
    const unknown = await http(portal.url, 'GET', `/api/sessions/${newSessionId()}/export?format=csv`, {
      headers: withToken(admin),
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'Session not found' });
  });
});
