import type pg from 'pg';
import { beforeEach, describe, expect, it } from 'vitest';
import { findingFingerprint } from '@svc/protocol/node';
import {
  createLicense,
  createScopedUser,
  FakeClock,
  uniqueClientId,
  type LicenseFixture,
} from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { ADMIN_EMAIL, type TestPortal } from '@svc/test-support/portal';
import { usePortalWithDb } from '@svc/test-support/portal-db';

/**
 * PATCH /api/remediation-update by finding (fingerprint) and risk exceptions set in the
 * portal (docs/decisions.md#risk-exceptions-through-the-same-operation), made on the findings of record and read back from the
 * session file as the portal serves it (docs/findings-of-record.md). Real portal, real
 * PostgreSQL, real blob store. Each test scans a target of its own: records belong to a target.
 */

type Entry = Record<string, unknown>;
const OLD = '2025-01-01T00:00:00.000Z';

const fp = (rule_id: string, host: string, port = 443) => findingFingerprint({ rule_id, host, port, protocol: 'tcp' });

function entry(title: string, severity: string, host: string, extra: Entry = {}): Entry {
  return {
    title,
    severity,
    host,
    status: 'persistent',
    status_changed: OLD,
    note: '',
    first_seen: '20250101_000000',
    prior_status: null,
    exception_status: null,
    ...extra,
  };
}

/**
 * Two hosts with the same weakness (same title), one other weakness; the third entry has no
 * fingerprint of its own (an older file), its finding has.
 */
function sessionDoc(sessionId: string, clientId: string): Entry {
  return {
    metadata: { session_id: sessionId, client_id: clientId, client: 'Acme', target: `10.0.0.0/24 #${sessionId}` },
    summary: {
      risk_score: 73,
      risk_grade: 'D',
      risk_score_operational: 73,
      risk_grade_operational: 'D',
      exception_impact: { excepted_count: 0, score_delta: 0 },
      total_findings: 3,
      total_hosts: 2,
    },
    findings: [
      {
        id: 'f-001',
        rule_id: 'svc.tls.v1_0',
        title: 'TLS 1.0',
        severity: 'high',
        host: '10.0.0.1',
        port: 443,
        protocol: 'tcp',
        fingerprint: fp('svc.tls.v1_0', '10.0.0.1'),
      },
      {
        id: 'f-002',
        rule_id: 'svc.tls.v1_0',
        title: 'TLS 1.0',
        severity: 'high',
        host: '10.0.0.2',
        port: 443,
        protocol: 'tcp',
        fingerprint: fp('svc.tls.v1_0', '10.0.0.2'),
      },
      {
        id: 'f-003',
        rule_id: 'svc.telnet',
        title: 'Telnet',
        severity: 'critical',
        host: '10.0.0.2',
        port: 23,
        protocol: 'tcp',
      },
    ],
    remediation: [
      entry('TLS 1.0', 'high', '10.0.0.1', { finding_id: 'f-001', fingerprint: fp('svc.tls.v1_0', '10.0.0.1') }),
      entry('TLS 1.0', 'high', '10.0.0.2', { finding_id: 'f-002', fingerprint: fp('svc.tls.v1_0', '10.0.0.2') }),
      entry('Telnet', 'critical', '10.0.0.2', { finding_id: 'f-003' }),
    ],
    remediation_resolved: [],
  };
}

let counter = 0;
const newSessionId = () => `20250305_${String(100000 + counter++).slice(-6)}_${Math.random().toString(36).slice(2, 8)}`;

describe('PATCH /api/remediation-update by finding, and risk exceptions', () => {
  const clock = new FakeClock();
  let portal: TestPortal;
  let admin: string;
  let db: pg.Client;
  let acme: LicenseFixture;

  async function upload(key: string, doc: Entry): Promise<string> {
    const form = new FormData();
    form.append('session_json', new Blob([JSON.stringify(doc)], { type: 'application/json' }), 'session_results.json');
    const res = await fetch(`${portal.url}/api/upload`, { method: 'POST', headers: withKey(key), body: form });
    const body = (await res.json()) as { session_id?: string };
    if (res.status !== 200 || !body.session_id) throw new Error(`upload: ${res.status} ${JSON.stringify(body)}`);
    return body.session_id;
  }

  const patch = (token: string, body: unknown) =>
    http(portal.url, 'PATCH', '/api/remediation-update', { headers: withToken(token), json: body });

  /** The session as the listing and detail present it: its numbers are those of its current triage. */
  async function row(sessionId: string) {
    const res = await http(portal.url, 'GET', `/api/sessions?session=${sessionId}`, { headers: withToken(admin) });
    expect(res.status, res.text).toBe(200);
    return res.body.session as { metadata: any } & Record<string, any> & { exception_summary: any };
  }

  /** The session file as the portal serves it: the stored evidence with the current triage. */
  async function storedDoc(sessionId: string): Promise<any> {
    const res = await http(portal.url, 'GET', `/api/download?session=${sessionId}`, { headers: withToken(admin) });
    expect(res.status, res.text).toBe(200);
    return JSON.parse(res.text);
  }

  async function auditData(sessionId: string) {
    return (
      await db.query(
        "SELECT actor, data FROM audit_events WHERE session_id = $1 AND event_type = 'remediation_updated' ORDER BY id",
        [sessionId],
      )
    ).rows as { actor: string; data: any }[];
  }

  usePortalWithDb(
    async (p) => {
      ({ portal, db } = p);
      admin = await portal.adminToken();
      acme = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('acme') });
    },
    { now: clock.now },
  );
  beforeEach(() => {
    clock.set(new Date(Math.floor(Date.now() / 1000) * 1000));
  });
  /** The clock's UTC day plus `offset` days, YYYY-MM-DD. */
  const day = (offset: number) => new Date(clock.now().getTime() + offset * 86_400_000).toISOString().slice(0, 10);
  const at = (ms = 0) => new Date(clock.now().getTime() + ms).toISOString();

  const FP1 = fp('svc.tls.v1_0', '10.0.0.1');
  const FP2 = fp('svc.tls.v1_0', '10.0.0.2');
  const FP_TELNET = fp('svc.telnet', '10.0.0.2', 23);

  it('by fingerprint changes exactly one entry; the answer says one matched', async () => {
    const sessionId = await upload(acme.key, sessionDoc(newSessionId(), acme.record.client_id));
    const res = await patch(admin, {
      session_id: sessionId,
      items: [{ fingerprint: FP1, status: 'in_progress', note: 'ticket 42' }],
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.changed).toBe(1);
    expect(res.body.unmatched).toEqual([]);
    expect(res.body.results).toEqual([{ fingerprint: FP1, matched: 1 }]);
    const doc = await storedDoc(sessionId);
    expect(doc.remediation.map((e: Entry) => [e['host'], e['title'], e['status'], e['note']])).toEqual([
      ['10.0.0.1', 'TLS 1.0', 'in_progress', 'ticket 42'],
      ['10.0.0.2', 'TLS 1.0', 'persistent', ''],
      ['10.0.0.2', 'Telnet', 'persistent', ''],
    ]);
    expect(doc.remediation[0].status_changed).toBe(at());
    // The other entries keep their status since the scan (the file said persistent).
    expect(doc.remediation[1]).toMatchObject({ fingerprint: FP2, status: 'persistent', status_source: 'scan' });
    expect((await row(sessionId)).remediation_summary.by_status).toEqual({
      new: 0,
      persistent: 2,
      in_progress: 1,
      resolved: 0,
      deferred: 0,
    });
    const events = await auditData(sessionId);
    expect(events).toHaveLength(1);
    expect(events[0]!.data.items).toEqual([{ fingerprint: FP1, status: 'in_progress', matched: 1 }]);
  });

  it('finds an entry without a stored fingerprint through its finding', async () => {
    const sessionId = await upload(acme.key, sessionDoc(newSessionId(), acme.record.client_id));
    const res = await patch(admin, { session_id: sessionId, items: [{ fingerprint: FP_TELNET, status: 'deferred' }] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.results).toEqual([{ fingerprint: FP_TELNET, matched: 1 }]);
    const doc = await storedDoc(sessionId);
    expect(doc.remediation.map((e: Entry) => e['status'])).toEqual(['persistent', 'persistent', 'deferred']);
  });

  it('by title updates every entry of that title and says how many; an unknown fingerprint is unmatched', async () => {
    const sessionId = await upload(acme.key, sessionDoc(newSessionId(), acme.record.client_id));
    const unknown = 'f'.repeat(64);
    const res = await patch(admin, {
      session_id: sessionId,
      items: [
        { title: 'TLS 1.0', status: 'deferred' },
        { fingerprint: unknown, status: 'resolved' },
      ],
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.changed).toBe(2);
    expect(res.body.results).toEqual([
      { title: 'TLS 1.0', matched: 2 },
      { fingerprint: unknown, matched: 0 },
    ]);
    expect(res.body.unmatched).toEqual([unknown]);
    const doc = await storedDoc(sessionId);
    expect(doc.remediation.map((e: Entry) => e['status'])).toEqual(['deferred', 'deferred', 'persistent']);
  });

  it('refuses an item with both or neither of title and fingerprint, or nothing to change', async () => {
    const sessionId = await upload(acme.key, sessionDoc(newSessionId(), acme.record.client_id));
    const before = await row(sessionId);
    for (const item of [
      { title: 'TLS 1.0', fingerprint: FP1, status: 'deferred' },
      { status: 'deferred' },
      { fingerprint: FP1 },
      { fingerprint: 'abc', status: 'deferred' },
      { title: 'TLS 1.0', exception: { reason: 'x', expiry: day(10) } },
    ]) {
      const res = await patch(admin, { session_id: sessionId, items: [item] });
      expect(res.status, JSON.stringify(item)).toBe(400);
      expect(typeof res.body.error).toBe('string');
    }
    expect(await row(sessionId)).toEqual(before);
  });

  it('creates, changes and withdraws an exception: stored file, summary, operational score, audit', async () => {
    const sessionId = await upload(acme.key, sessionDoc(newSessionId(), acme.record.client_id));
    const user = await createScopedUser(portal, [acme.record.client_id]);
    const before = await row(sessionId);
    expect(before.exception_summary.risk_score_operational).toBe(73);
    const EXP1 = day(30);
    const EXP2 = day(120);

    const T0 = at();
    const created = await patch(user.token, {
      session_id: sessionId,
      items: [{ fingerprint: FP_TELNET, exception: { reason: 'isolated VLAN', expiry: EXP1 } }],
    });
    expect(created.status, created.text).toBe(200);
    expect(created.body.changed).toBe(0);
    expect(created.body.results).toEqual([{ fingerprint: FP_TELNET, matched: 1 }]);
    let doc = await storedDoc(sessionId);
    expect(doc.remediation[2]).toMatchObject({
      title: 'Telnet',
      status: 'persistent',
      exception_status: 'accepted',
      exception_reason: 'isolated VLAN',
      exception_approver: user.email,
      exception_approved_at: T0,
      exception_expiry: EXP1,
      exception_expired: false,
      exception_source: 'person',
    });
    expect(doc.remediation[0].exception_status).toBeNull();
    // Two highs stay open: the operational score is that of two highs, below the actual one.
    expect(doc.summary.risk_score).toBe(73);
    expect(doc.summary.risk_score_operational).toBeLessThan(73);
    expect(doc.summary.exception_impact.excepted_count).toBe(1);
    expect(doc.summary.exception_impact.score_delta).toBe(73 - doc.summary.risk_score_operational);
    let meta = await row(sessionId);
    expect(meta.exception_summary).toEqual({
      total_exceptions: 1,
      by_status: { accepted: 1, expired: 0 },
      score_delta: 73 - doc.summary.risk_score_operational,
      risk_score_operational: doc.summary.risk_score_operational,
      risk_grade_operational: doc.summary.risk_grade_operational,
    });
    expect(meta.risk_score).toBe(73);

    clock.advance(60_000);
    const T1 = at();
    const changed = await patch(admin, {
      session_id: sessionId,
      items: [{ fingerprint: FP_TELNET, exception: { reason: 'replaced in Q3', expiry: EXP2 } }],
    });
    expect(changed.status, changed.text).toBe(200);
    doc = await storedDoc(sessionId);
    expect(doc.remediation[2]).toMatchObject({
      exception_status: 'accepted',
      exception_reason: 'replaced in Q3',
      exception_approver: ADMIN_EMAIL,
      exception_approved_at: T1,
      exception_expiry: EXP2,
    });

    const withdrawn = await patch(user.token, {
      session_id: sessionId,
      items: [{ fingerprint: FP_TELNET, exception: null }],
    });
    expect(withdrawn.status, withdrawn.text).toBe(200);
    doc = await storedDoc(sessionId);
    expect(doc.remediation[2]).toMatchObject({
      exception_status: null,
      exception_reason: null,
      exception_approver: null,
      exception_approved_at: null,
      exception_expiry: null,
      exception_expired: false,
    });
    expect(doc.summary.risk_score_operational).toBe(73);
    meta = await row(sessionId);
    expect(meta.exception_summary).toMatchObject({ total_exceptions: 0, score_delta: 0, risk_score_operational: 73 });

    const events = await auditData(sessionId);
    expect(events.map((e) => [e.actor, e.data.exceptions])).toEqual([
      [user.email, [{ fingerprint: FP_TELNET, action: 'created', reason: 'isolated VLAN', expiry: EXP1 }]],
      [ADMIN_EMAIL, [{ fingerprint: FP_TELNET, action: 'changed', reason: 'replaced in Q3', expiry: EXP2 }]],
      [user.email, [{ fingerprint: FP_TELNET, action: 'withdrawn', reason: null, expiry: null }]],
    ]);
    // Withdrawing again changes nothing and writes nothing.
    const again = await patch(admin, { session_id: sessionId, items: [{ fingerprint: FP_TELNET, exception: null }] });
    expect(again.status).toBe(200);
    expect(await auditData(sessionId)).toHaveLength(3);
  });

  it('refuses a past or invalid expiry and an empty reason with 400, storing nothing', async () => {
    const sessionId = await upload(acme.key, sessionDoc(newSessionId(), acme.record.client_id));
    const before = await row(sessionId);
    for (const exception of [
      { reason: 'r', expiry: day(-1) },
      { reason: 'r', expiry: '2027-02-30' },
      { reason: 'r', expiry: '10/03/2027' },
      { reason: '   ', expiry: day(10) },
    ]) {
      const res = await patch(admin, { session_id: sessionId, items: [{ fingerprint: FP1, exception }] });
      expect(res.status, JSON.stringify(exception)).toBe(400);
      expect(typeof res.body.error).toBe('string');
    }
    const past = await patch(admin, {
      session_id: sessionId,
      items: [{ fingerprint: FP1, exception: { reason: 'r', expiry: day(-1) } }],
    });
    expect(past.body).toEqual({
      error: `Invalid exception expiry ${day(-1)} for items[0]: must be today (${day(0)}) or later`,
    });
    expect(await row(sessionId)).toEqual(before);
    // Today is the last valid day, so it is accepted.
    const today = await patch(admin, {
      session_id: sessionId,
      items: [{ fingerprint: FP1, exception: { reason: 'r', expiry: day(0) } }],
    });
    expect(today.status, today.text).toBe(200);
  });

  it('an exception on a resolved finding is a 400; reopening it in the same item may carry one', async () => {
    const sessionId = await upload(acme.key, sessionDoc(newSessionId(), acme.record.client_id));
    expect(
      (await patch(admin, { session_id: sessionId, items: [{ fingerprint: FP1, status: 'resolved' }] })).status,
    ).toBe(200);
    const before = await row(sessionId);
    const exception = { reason: 'r', expiry: day(5) };
    const refused = await patch(admin, { session_id: sessionId, items: [{ fingerprint: FP1, exception }] });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      error: `Cannot set an exception on the resolved finding ${FP1}: exceptions apply to open findings`,
    });
    expect(await row(sessionId)).toEqual(before);
    const reopened = await patch(admin, {
      session_id: sessionId,
      items: [{ fingerprint: FP1, status: 'in_progress', exception }],
    });
    expect(reopened.status, reopened.text).toBe(200);
    const doc = await storedDoc(sessionId);
    expect(doc.remediation_resolved).toEqual([]);
    // Entries are served in the order of their findings.
    expect(doc.remediation[0]).toMatchObject({
      fingerprint: FP1,
      status: 'in_progress',
      exception_status: 'accepted',
    });
  });

  it('an exception outside the user scope is 404, on a professional tier 403', async () => {
    const sessionId = await upload(acme.key, sessionDoc(newSessionId(), acme.record.client_id));
    const other = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('other') });
    const outsider = await createScopedUser(portal, [other.record.client_id]);
    const item = { fingerprint: FP1, exception: { reason: 'r', expiry: day(10) } };
    const before = await row(sessionId);
    const res = await patch(outsider.token, { session_id: sessionId, items: [item] });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Session not found' });

    const pro = await createLicense(portal, { tier: 'professional', client_id: uniqueClientId('pro') });
    const proSession = await upload(pro.key, sessionDoc(newSessionId(), pro.record.client_id));
    const proUser = await createScopedUser(portal, [pro.record.client_id]);
    const proBefore = await row(proSession);
    const refused = await patch(proUser.token, { session_id: proSession, items: [item] });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: 'Insufficient permissions for remediation:update' });
    expect(await row(sessionId)).toEqual(before);
    expect(await row(proSession)).toEqual(proBefore);
  });
});
