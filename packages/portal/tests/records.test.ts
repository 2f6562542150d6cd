import { findingFingerprint } from '@svc/protocol/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense, DAY_MS, FakeClock, type LicenseFixture, uniqueClientId } from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { ADMIN_EMAIL, ADMIN_PASSWORD, login, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { sweepExpiredSessions } from '../src/sessions/retention.ts';

/**
 * Findings of record (docs/findings-of-record.md), through the HTTP API of a real portal on a
 * real PostgreSQL: the decisions people make outlive re-uploads, retention and scans that looked
 * elsewhere; an upload cannot forge them; every view states the same numbers.
 */

type Doc = Record<string, any>;
const HOST_A = '10.9.0.1';
const HOST_B = '10.9.0.2';

interface F {
  rule: string;
  host: string;
  port: number;
  severity: string;
  title: string;
}
const FTP: F = { rule: 'ftp-anonymous', host: HOST_A, port: 21, severity: 'high', title: 'Anonymous FTP' };
const TELNET: F = { rule: 'telnet-open', host: HOST_A, port: 23, severity: 'critical', title: 'Telnet' };
const HTTP: F = { rule: 'http-no-tls', host: HOST_A, port: 80, severity: 'medium', title: 'HTTP without TLS' };
const SSH: F = { rule: 'ssh-weak-algorithms', host: HOST_B, port: 22, severity: 'low', title: 'Weak SSH' };
const MYSQL: F = { rule: 'database-exposed', host: HOST_B, port: 3306, severity: 'high', title: 'MySQL open' };
const REDIS: F = { rule: 'database-exposed', host: HOST_B, port: 6379, severity: 'critical', title: 'Redis open' };

const fp = (f: F) => findingFingerprint({ rule_id: f.rule, host: f.host, port: f.port, protocol: 'tcp' });

/** A session file as svc scan writes it: findings, entries the scanner tracked, what it looked at. */
function scan(
  sessionId: string,
  target: string,
  findings: F[],
  opts: { entries?: Record<string, Doc>; coverage?: { hosts: string[]; tcp: string } } = {},
): Doc {
  const coverage = opts.coverage ?? { hosts: [HOST_A, HOST_B], tcp: '1-65535' };
  return {
    metadata: {
      session_id: sessionId,
      target,
      finished_at: `${sessionId.slice(0, 4)}-${sessionId.slice(4, 6)}-${sessionId.slice(6, 8)}T${sessionId.slice(9, 11)}:${sessionId.slice(11, 13)}:00.000Z`,
    },
    findings: findings.map((f, i) => ({
      id: `f-${i}`,
      rule_id: f.rule,
      title: f.title,
      severity: f.severity,
      host: f.host,
      port: f.port,
      protocol: 'tcp',
      fingerprint: fp(f),
    })),
    remediation: findings.map((f, i) => ({
      title: f.title,
      severity: f.severity,
      host: f.host,
      finding_id: `f-${i}`,
      fingerprint: fp(f),
      status: 'new',
      note: '',
      first_seen: sessionId,
      exception_status: null,
      ...opts.entries?.[f.rule + f.port],
    })),
    remediation_resolved: [],
    coverage: {
      hosts: coverage.hosts,
      ports: { tcp: coverage.tcp },
      profile: 'quick_recon',
      tools: ['nmap'],
      source: 'svc-scan',
    },
  };
}

describe('findings of record', () => {
  const clock = new FakeClock(new Date('2026-11-20T12:00:00.000Z'));
  let portal: TestPortal;
  /** A fresh token each time: the clock moves by months, past any token's hour. */
  const token = () => login(portal.url, ADMIN_EMAIL, ADMIN_PASSWORD);
  let acme: LicenseFixture;
  let solo: LicenseFixture;
  /** The client of the test of checks not made: its own records. */
  let keys: LicenseFixture;
  const target = '10.9.0.0/30';

  async function upload(key: string, doc: Doc) {
    const form = new FormData();
    form.append('session_json', new Blob([JSON.stringify(doc)], { type: 'application/json' }), 'session_results.json');
    form.append(
      'report_html',
      new Blob(['<html><body><p>report</p></body></html>'], { type: 'text/html' }),
      'report.html',
    );
    const res = await fetch(`${portal.url}/api/upload`, { method: 'POST', headers: withKey(key), body: form });
    return { status: res.status, body: (await res.json()) as Doc };
  }
  const ok = async (key: string, doc: Doc) => {
    const res = await upload(key, doc);
    if (res.status !== 200) throw new Error(`upload ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const patch = async (items: unknown[], sessionId: string, clientId: string) =>
    http(portal.url, 'PATCH', '/api/remediation-update', {
      headers: withToken(await token()),
      json: { session_id: sessionId, client_id: clientId, items },
    });
  const latest = async (key: string) => {
    const res = await http(portal.url, 'GET', `/api/sessions/latest-state?target=${encodeURIComponent(target)}`, {
      headers: withKey(key),
    });
    expect(res.status, res.text).toBe(200);
    return res.body as Doc;
  };
  const byFp = (entries: Doc[]) => new Map(entries.map((e) => [e['fingerprint'] as string, e]));
  const download = async (sessionId: string, clientId: string) => {
    const res = await http(portal.url, 'GET', `/api/download?session=${sessionId}&client_id=${clientId}`, {
      headers: withToken(await token()),
    });
    expect(res.status, res.text).toBe(200);
    return JSON.parse(res.text) as Doc;
  };

  beforeAll(async () => {
    portal = await startTestPortal({ now: clock.now });
    acme = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('acme') });
    solo = await createLicense(portal, { tier: 'professional', client_id: uniqueClientId('solo') });
    keys = await createLicense(portal, { tier: 'professional', client_id: uniqueClientId('keys') });
  });
  afterAll(async () => {
    await portal?.close();
  });

  it('keeps people’s decisions through a re-upload, a scan that looked elsewhere, retention and the next scans', async () => {
    const client = acme.record.client_id;
    const s1 = '20261120_100000';
    const first = await ok(acme.key, scan(s1, target, [FTP, TELNET, HTTP, SSH, MYSQL]));
    expect(first['findings']).toEqual({ new: 5, persistent: 0, reopened: 0, resolved: 0, not_checked: 0 });

    // Triage in the portal: in_progress with a note, an exception, deferred, a false positive.
    const res = await patch(
      [
        { fingerprint: fp(FTP), status: 'in_progress', note: 'ticket 7' },
        { fingerprint: fp(TELNET), exception: { reason: 'isolated VLAN', expiry: '2027-12-31' } },
        { fingerprint: fp(HTTP), status: 'deferred' },
        { fingerprint: fp(SSH), disposition: { disposition: 'false_positive', reason: 'banner of a honeypot' } },
      ],
      s1,
      client,
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.results.map((r: Doc) => r['matched'])).toEqual([1, 1, 1, 1]);

    const decided = (entries: Map<string, Doc>) => {
      expect(entries.get(fp(FTP))).toMatchObject({ status: 'in_progress', note: 'ticket 7', status_source: 'person' });
      expect(entries.get(fp(TELNET))).toMatchObject({
        exception_status: 'accepted',
        exception_reason: 'isolated VLAN',
        exception_approver: 'admin@test.local',
        exception_source: 'person',
      });
      expect(entries.get(fp(HTTP))).toMatchObject({ status: 'deferred' });
      expect(entries.get(fp(SSH))).toMatchObject({
        disposition: 'false_positive',
        disposition_reason: 'banner of a honeypot',
      });
    };
    decided(byFp((await latest(acme.key))['remediation']));

    // A re-upload of the same session (push_session): the file still says new everywhere.
    clock.advance(60_000);
    const again = await ok(acme.key, scan(s1, target, [FTP, TELNET, HTTP, SSH, MYSQL]));
    expect(again['message']).toBe('Session replaced');
    // The same scan again: its findings are still the ones first seen in it.
    expect(again['findings']).toEqual({ new: 5, persistent: 0, reopened: 0, resolved: 0, not_checked: 0 });
    decided(byFp((await download(s1, client))['remediation']));

    // A scan that looked elsewhere (other ports): nothing is resolved, everything is not checked.
    clock.advance(DAY_MS);
    const s2 = '20261121_100000';
    const narrow = await ok(
      acme.key,
      scan(s2, target, [], { coverage: { hosts: [HOST_A, HOST_B], tcp: '8000-8100' } }),
    );
    expect(narrow['findings']).toEqual({ new: 0, persistent: 0, reopened: 0, resolved: 0, not_checked: 5 });
    const afterNarrow = await latest(acme.key);
    expect(afterNarrow['remediation_resolved']).toEqual([]);
    decided(byFp(afterNarrow['remediation']));
    const narrowDoc = await download(s2, client);
    expect(narrowDoc['remediation_not_checked'].map((e: Doc) => e['fingerprint']).sort()).toEqual(
      [FTP, TELNET, HTTP, SSH, MYSQL].map(fp).sort(),
    );

    // Retention removes every session; the records remain.
    clock.advance(120 * DAY_MS);
    expect(await sweepExpiredSessions(portal.ctx)).toBeGreaterThanOrEqual(2);
    const afterSweep = await latest(acme.key);
    expect(afterSweep['session_stored']).toBe(false);
    decided(byFp(afterSweep['remediation']));

    // The next full scan: MySQL was fixed (its port was looked at), Redis is new; the decisions hold.
    const s3 = '20270321_100000';
    const next = await ok(acme.key, scan(s3, target, [FTP, TELNET, HTTP, SSH, REDIS]));
    expect(next['findings']).toEqual({ new: 1, persistent: 4, reopened: 0, resolved: 1, not_checked: 0 });
    const doc = await download(s3, client);
    const entries = byFp(doc['remediation']);
    decided(entries);
    expect(entries.get(fp(REDIS))).toMatchObject({ status: 'new', first_seen: s3 });
    expect(entries.get(fp(FTP))).toMatchObject({ first_seen: s1 });
    expect(doc['remediation_resolved'].map((e: Doc) => e['fingerprint'])).toEqual([fp(MYSQL)]);

    // MySQL comes back: reopened, not new, its history kept.
    const s4 = '20270322_100000';
    const back = await ok(acme.key, scan(s4, target, [FTP, TELNET, HTTP, SSH, REDIS, MYSQL]));
    expect(back['findings']).toMatchObject({ reopened: 1, new: 0 });
    const mysql = byFp((await latest(acme.key))['remediation']).get(fp(MYSQL));
    expect(mysql).toMatchObject({ status: 'persistent', first_seen: s1 });
    expect(mysql?.['reopened_at']).not.toBeNull();
  });

  it('a check the next scan could not make keeps its finding open; the other findings of the port are resolved', async () => {
    const KEY: F = { rule: 'ssh-weak-host-key', host: HOST_B, port: 22, severity: 'medium', title: 'Short host key' };
    const first = await ok(keys.key, scan('20261120_110000', target, [KEY, SSH]));
    expect(first['findings']).toEqual({ new: 2, persistent: 0, reopened: 0, resolved: 0, not_checked: 0 });
    // The next scan looked everywhere but could not fetch the port's host key (svc scan says so).
    const next = scan('20261120_120000', target, []);
    (next['coverage'] as Doc)['not_checked'] = [
      { host: HOST_B, port: 22, protocol: 'tcp', rules: [KEY.rule], reason: 'SSH host key not measured' },
    ];
    const res = await ok(keys.key, next);
    expect(res['findings']).toEqual({ new: 0, persistent: 0, reopened: 0, resolved: 1, not_checked: 1 });
    const state = await latest(keys.key);
    expect(state['remediation'].map((e: Doc) => [e['fingerprint'], e['status']])).toEqual([[fp(KEY), 'new']]);
    expect(state['remediation_resolved'].map((e: Doc) => e['fingerprint'])).toEqual([fp(SSH)]);
  });

  it('a key without remediation:update cannot lower the operational score by claiming an approval', async () => {
    const client = solo.record.client_id;
    const sid = '20261120_110000';
    const forged = scan(sid, target, [TELNET, FTP], {
      entries: {
        [TELNET.rule + TELNET.port]: {
          status: 'persistent',
          exception_status: 'accepted',
          exception_reason: 'approved',
          exception_approver: 'admin@example.test',
          exception_approved_at: '2026-11-19T00:00:00.000Z',
          exception_expiry: '2027-12-31',
        },
      },
    });
    await ok(solo.key, forged);
    const listed = await http(portal.url, 'GET', `/api/sessions?session=${sid}&client_id=${client}`, {
      headers: withToken(await token()),
    });
    const m = listed.body.session;
    expect(m.exception_summary.by_status).toEqual({ accepted: 0, expired: 0 });
    expect(m.exception_summary.risk_score_operational).toBe(m.risk_score);
    const doc = await download(sid, client);
    const telnet = byFp(doc['remediation']).get(fp(TELNET));
    expect(telnet).toMatchObject({ exception_status: null, exception_approver: null });
    const detail = await http(portal.url, 'GET', `/api/sessions/${sid}/findings?client_id=${client}&q=telnet`, {
      headers: withToken(await token()),
    });
    const row = detail.body.findings[0];
    const full = await http(portal.url, 'GET', `/api/sessions/${sid}/findings/${row.index}?client_id=${client}`, {
      headers: withToken(await token()),
    });
    expect(full.body.history).toEqual([
      expect.objectContaining({
        field: 'claim',
        source: 'upload',
        actor: `license:${solo.record.id}`,
        detail: 'not applied: the key that uploaded it has no remediation:update permission',
      }),
    ]);
  });

  it('an id the client holds for another target is refused with 409, nothing replaced', async () => {
    const sid = '20261120_120000';
    await ok(acme.key, scan(sid, 'host-one', [FTP]));
    const res = await upload(acme.key, scan(sid, 'host-two', [TELNET]));
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      error: `Session ${sid} already holds the scan of target "host-one"; this upload is of target "host-two". Nothing was replaced: upload it under another session id`,
      conflict: 'session_target',
      target: 'host-one',
    });
    const kept = await download(sid, acme.record.client_id);
    expect(kept['metadata']['target']).toBe('host-one');
  });

  it('an id the client holds for another run of the same target is refused with 409; the same run replaces it', async () => {
    // Two agents of one client running one group schedule against the same target in the same
    // second produce the same session id: the second scan must not replace the first.
    const sid = '20261120_121500';
    const run = (runId: string | undefined, findings: F[]) => {
      const doc = scan(sid, 'shared-target', findings);
      if (runId !== undefined) (doc['metadata'] as Doc)['run_id'] = runId;
      return doc;
    };
    const first = 'a'.repeat(32);
    await ok(acme.key, run(first, [FTP]));
    const other = await upload(acme.key, run('b'.repeat(32), [TELNET]));
    expect(other.status).toBe(409);
    expect(other.body).toEqual({
      error: `Session ${sid} already holds another scan run of target "shared-target" (run ${first}); this upload is run ${'b'.repeat(32)}. Nothing was replaced: scan again, or upload it under another session id`,
      conflict: 'session_run',
      target: 'shared-target',
    });
    expect(byFp((await download(sid, acme.record.client_id))['remediation']).has(fp(FTP))).toBe(true);
    // The same run again (push_session, svc upload) replaces the session as before.
    expect((await upload(acme.key, run(first, [FTP, TELNET]))).status).toBe(200);
    // A file without a run id (an older scanner) is taken as the same run.
    expect((await upload(acme.key, run(undefined, [FTP]))).status).toBe(200);
  });

  it('the listing, the downloaded file, a SARIF export and the share page state the same numbers', async () => {
    const client = acme.record.client_id;
    const t = 'numbers-target';
    const sid = '20261120_130000';
    const up = await ok(acme.key, scan(sid, t, [TELNET, REDIS, MYSQL, HTTP]));
    const inTwoDays = new Date(clock.now().getTime() + 2 * DAY_MS).toISOString().slice(0, 10);
    const changed = await patch(
      [
        { fingerprint: fp(TELNET), exception: { reason: 'segmented', expiry: inTwoDays } },
        { fingerprint: fp(REDIS), disposition: { disposition: 'false_positive', reason: 'not redis' } },
        { fingerprint: fp(MYSQL), status: 'resolved' },
      ],
      sid,
      client,
    );
    expect(changed.status, changed.text).toBe(200);
    const check = async () => {
      const listed = await http(portal.url, 'GET', `/api/sessions?client_id=${client}&target=${t}`, {
        headers: withToken(await token()),
      });
      const s = listed.body.sessions[0];
      const doc = await download(sid, client);
      expect(doc['summary']['risk_score']).toBe(s.risk_score);
      expect(doc['summary']['risk_score_operational']).toBe(s.exception_summary.risk_score_operational);
      expect(doc['metadata']['risk_score_operational']).toBe(s.exception_summary.risk_score_operational);
      expect(doc['metadata']['exception_summary']).toEqual(s.exception_summary);
      expect(doc['metadata']['remediation_summary']).toEqual(s.remediation_summary);
      expect(doc['metadata']['disposition_summary']).toEqual({ false_positive: 1 });
      const sarif = await http(portal.url, 'GET', `/api/sessions/${sid}/export?format=sarif&client_id=${client}`, {
        headers: withToken(await token()),
      });
      expect(sarif.status).toBe(200);
      const run = JSON.parse(sarif.text).runs[0];
      expect(run.properties).toMatchObject({
        risk_score: s.risk_score,
        risk_score_operational: s.exception_summary.risk_score_operational,
      });
      const share = await fetch(`${portal.url}/share/?token=${up['share_token']}`);
      const html = await share.text();
      expect(html).toContain(
        `actual risk ${s.risk_score} (${s.risk_grade}) · operational risk ${s.exception_summary.risk_score_operational} (${s.exception_summary.risk_grade_operational})`,
      );
      return s;
    };
    const before = await check();
    expect(before.exception_summary.by_status).toEqual({ accepted: 1, expired: 0 });
    // The exception's last valid day passes: expired everywhere on the same day.
    clock.advance(3 * DAY_MS);
    const after = await check();
    expect(after.exception_summary.by_status).toEqual({ accepted: 0, expired: 1 });
    expect(after.exception_summary.risk_score_operational).toBe(after.risk_score);
  });
});
