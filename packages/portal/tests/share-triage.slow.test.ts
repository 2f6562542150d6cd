import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findingFingerprint } from '@svc/protocol/node';
import { createLicense, FakeClock, type LicenseFixture, uniqueClientId } from '@svc/test-support/factories';
import { http, withToken } from '@svc/test-support/http';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { newSessionId, postUpload, sessionParts } from '@svc/test-support/upload';

/**
 * A shared report after the upload: an exception made in the portal changes
 * what the customer's link states, to the console's value, and the page says the report's own
 * figures are older (docs/findings-of-record.md#the-share-page). Real portal and PostgreSQL.
 */

const fp = (rule_id: string, host: string, port: number) =>
  findingFingerprint({ rule_id, host, port, protocol: 'tcp' });
const FP_TELNET = fp('svc.telnet', '10.0.0.2', 23);
const day = (d: Date) => d.toISOString().slice(0, 10);
const REPORT =
  '<!DOCTYPE html><html lang="en"><head><title>Report</title></head><body><h1>Operational risk 76 D</h1></body></html>';

function doc(sessionId: string, clientId: string) {
  const finding = (id: string, rule_id: string, title: string, severity: string, host: string, port: number) => ({
    id,
    rule_id,
    title,
    severity,
    host,
    port,
    protocol: 'tcp',
    fingerprint: fp(rule_id, host, port),
  });
  const findings = [
    finding('f-1', 'svc.tls.v1_0', 'TLS 1.0', 'high', '10.0.0.1', 443),
    finding('f-2', 'svc.smb.v1', 'SMBv1', 'high', '10.0.0.1', 445),
    finding('f-3', 'svc.telnet', 'Telnet', 'critical', '10.0.0.2', 23),
  ];
  return {
    metadata: { session_id: sessionId, client_id: clientId, client: 'Acme', target: '10.0.0.0/24' },
    summary: { total_findings: 3, total_hosts: 2 },
    findings,
    remediation: findings.map((f) => ({
      title: f.title,
      severity: f.severity,
      host: f.host,
      finding_id: f.id,
      fingerprint: f.fingerprint,
      status: 'new',
      first_seen: sessionId,
    })),
    remediation_resolved: [],
  };
}

describe('a shared report after the upload', () => {
  // Today (tokens are signed at the real time); whole seconds, as the portal stores them.
  const clock = new FakeClock(new Date(Math.floor(Date.now() / 1000) * 1000));
  let portal: TestPortal;
  let admin: string;
  let acme: LicenseFixture;

  beforeAll(async () => {
    portal = await startTestPortal({ now: clock.now });
    admin = await portal.adminToken();
    acme = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('acme') });
  });
  afterAll(async () => {
    await portal?.close();
  });

  /** The console's numbers for the session: the listing's, as the sessions page shows them. */
  async function consoleScores(sessionId: string) {
    const res = await http(portal.url, 'GET', `/api/sessions?session=${sessionId}`, { headers: withToken(admin) });
    expect(res.status, res.text).toBe(200);
    const s = res.body.session;
    return {
      actual: s.risk_score as number,
      grade: s.risk_grade as string,
      operational: s.exception_summary.risk_score_operational as number,
      operationalGrade: s.exception_summary.risk_grade_operational as string,
    };
  }

  /** What the share page's bar states as the current triage, and whether it says the report is older. */
  async function sharePage(token: string) {
    const res = await fetch(`${portal.url}/share/?token=${token}`);
    expect(res.status).toBe(200);
    const html = await res.text();
    const line = /<p class="triage" id="svc-share-triage"><strong>Current triage[^<]*<\/strong>\s*([^<]*)<\/p>/.exec(
      html,
    )?.[1];
    const m = /^actual risk (\d+) \(([A-F])\) · operational risk (\d+) \(([A-F])\)/.exec(line ?? '');
    expect(m, html.slice(0, 3000)).not.toBeNull();
    return {
      scores: { actual: Number(m![1]), grade: m![2], operational: Number(m![3]), operationalGrade: m![4] },
      changed: /id="svc-share-triage-changed">([^<]*)</.exec(html)?.[1] ?? null,
    };
  }

  it('states the console’s current score after an exception made in the portal, and that the report is older', async () => {
    const sessionId = newSessionId();
    const up = await postUpload(
      portal.url,
      acme.key,
      sessionParts(doc(sessionId, acme.record.client_id), { report: REPORT }),
    );
    expect(up.status, up.text).toBe(200);
    const token = up.body.share_token as string;

    const before = await consoleScores(sessionId);
    expect(before.operational).toBe(before.actual);
    expect(await sharePage(token)).toStrictEqual({ scores: before, changed: null });

    const uploaded = clock.now();
    clock.advance(60_000);
    const triaged = clock.now();
    const res = await http(portal.url, 'PATCH', '/api/remediation-update', {
      headers: withToken(admin),
      json: {
        session_id: sessionId,
        items: [
          {
            fingerprint: FP_TELNET,
            exception: { reason: 'isolated VLAN', expiry: day(new Date(clock.now().getTime() + 90 * 86_400_000)) },
          },
        ],
      },
    });
    expect(res.status, res.text).toBe(200);

    const after = await consoleScores(sessionId);
    expect(after.actual).toBe(before.actual);
    expect(after.operational).toBeLessThan(before.operational);
    const shared = await sharePage(token);
    expect(shared.scores).toStrictEqual(after);
    expect(shared.changed).toBe(
      `This report was generated on ${day(uploaded)}; its findings were triaged since (last on ${day(triaged)}). The report shows the figures as generated; the line above is current.`,
    );
    const api = await http(portal.url, 'GET', `/api/share?token=${token}`);
    expect(api.status).toBe(200);
    expect(api.body).toMatchObject({
      risk_score: after.actual,
      risk_score_operational: after.operational,
      risk_grade_operational: after.operationalGrade,
      triage_as_of: triaged.toISOString(),
      triage_changed_since_report: triaged.toISOString(),
    });
  });
});
