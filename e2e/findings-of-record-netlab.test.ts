import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { findingFingerprint } from '@svc/protocol/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense, DAY_MS, type LicenseFixture } from '@svc/test-support/factories';
import { http, withToken } from '@svc/test-support/http';
import { type Netlab, startNetlab } from '@svc/test-support/netlab';
import { assertInTestNetwork, scannerTools } from '@svc/test-support/netlab/scanner-tools';
import { bannerServer } from '@svc/test-support/netlab/services';
import { ADMIN_EMAIL, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { newSessionId, postUpload, sessionParts } from '@svc/test-support/upload';
import { untilValue } from '@svc/test-support/wait';
import { finishedCommand, queueCommand } from './helpers/agent-admin.ts';
import { startPortalWithKey } from './helpers/portal-with-key.ts';
import { portalConf, type SvcdProcess, startSvcd, untilRegistered } from '@svc/test-support/svcd';

/**
 * The findings of record (docs/findings-of-record.md), end to end: a real portal with a business
 * key, a real `svcd` whose `nmap` enters the test network's scanner namespace, run_scan commands
 * that upload. Scan 1 uploads; in the portal one finding gets in_progress and a note, one an
 * exception, one deferred, one a false-positive disposition. A run_scan with other ports resolves
 * none of them (not checked); push_session of the latest session keeps all four; the portal's
 * clock moves past every session's retention and the sweep removes the sessions, yet the next
 * scan still carries all four, resolves the weakness removed and reports the one planted as new.
 * A professional key's upload claiming an approved exception lowers nothing, and the listing, the
 * downloaded file, a SARIF export and the share page state the same score.
 *
 * The portal's clock is real time plus a shift the test moves (a frozen clock would stamp every
 * upload with one instant). The retention sweep runs at the portal's start and hourly: the test
 * restarts the portal on the same database and data directory after moving the clock, and waits
 * for the sessions to be gone (the sweep itself is not exported to tests outside the portal).
 * Needs root; nothing outside the harness subnet and loopback is contacted.
 */

type Obj = Record<string, any>;
interface Entry {
  fingerprint: string;
  title: string;
  host: string;
  port?: number;
  status: string;
  note?: string;
  first_seen?: string;
  exception_status?: string | null;
  exception_reason?: string | null;
  exception_expiry?: string | null;
  exception_approver?: string | null;
  exception_source?: string | null;
  disposition?: string | null;
  disposition_reason?: string | null;
}
interface Doc {
  metadata: Obj & { session_id: string; target: string };
  findings: { fingerprint: string; rule_id: string; host: string; port: number; severity: string }[];
  remediation: Entry[];
  remediation_resolved: Entry[];
  remediation_not_checked?: Entry[];
  summary: Obj & { risk_score: number; risk_score_operational: number };
}
interface LatestState {
  session_id: string;
  target: string;
  session_stored?: boolean;
  remediation: Entry[];
  remediation_resolved: Entry[];
}

const fp = (rule_id: string, host: string, port: number, protocol = 'tcp') =>
  findingFingerprint({ rule_id, host, port, protocol });

/** The portal's clock: real time plus `shift`, moved by the test. */
let shift = 0;
const portalNow = () => new Date(Date.now() + shift);
const RETENTION_DAYS = 90;
/** Outlives the clock's move past retention (exceptions are read for the portal's day). */
const EXPIRY = new Date(Date.now() + 200 * DAY_MS).toISOString().slice(0, 10);

const NOTE = 'CHG-2231: PostgreSQL moves behind the VPN in the next window';
const EXCEPTION_REASON = 'Redis on the isolated lab VLAN; compensating ACL on the switch';
const FP_REASON = 'memcached there is the cache of the lab harness itself, not a customer database';

let lab: Netlab;
let portal: TestPortal;
let key: string;
let clientId: string;
let dataDir: string;
let work: string;
let daemon: SvcdProcess;
let legacy: string;
let data: string;
let target: string;
const docs: Doc[] = [];
const sessionIds: string[] = [];

const POSTGRES = () => fp('database-exposed', data, 5432);
const REDIS = () => fp('redis-unauthenticated', data, 6379);
const MEMCACHED = () => fp('memcached-unauthenticated', data, 11211);
const MEMCACHED_EXPOSED = () => fp('database-exposed', data, 11211);
const FOUR = () => [POSTGRES(), REDIS(), MEMCACHED(), MEMCACHED_EXPOSED()];
const FTP = () => [fp('ftp-anonymous', legacy, 21), fp('ftp-cleartext', legacy, 21)];

const admin = async () => withToken(await portal.adminToken());

async function agentOn(uploadUrl: string, reuse?: SvcdProcess): Promise<SvcdProcess> {
  const d = await startSvcd({
    ...(reuse ? { agentId: reuse.agentId, home: reuse.home, configDir: reuse.configDir } : { home: work }),
    configs: { 'a-portal.conf': portalConf(uploadUrl, key) },
    // Every `nmap` and `snmpwalk` the daemon's scans start enters the scanner namespace first.
    env: { PATH: `${path.join(work, 'bin')}:${process.env['PATH'] ?? '/usr/bin:/bin'}` },
  });
  await d.waitFor(/msg="svcd started"/);
  await untilRegistered(portal, d.agentId);
  return d;
}

/** Runs one command on the agent to its end; returns the portal's session id of its result. */
async function command(type: string, payload: Record<string, unknown>): Promise<{ sessionId: string; stdout: string }> {
  const id = await queueCommand(portal, daemon.agentId, type, payload);
  const h = await finishedCommand(portal, id, 6 * 60_000);
  expect(h.command.status, JSON.stringify(h.result)).toBe('completed');
  const sessionId = h.result?.session_id;
  expect(sessionId).toMatch(/^\d{8}_\d{6}/);
  return { sessionId: sessionId!, stdout: h.result?.stdout ?? '' };
}

/** run_scan of both lab hosts with upload; `ports` narrows the quick profile's list. */
async function scan(ports?: string): Promise<{ sessionId: string; answer: Obj }> {
  const { sessionId, stdout } = await command('run_scan', {
    targets: `${legacy},${data}`,
    profile: 'quick',
    ...(ports === undefined ? {} : { ports }),
    upload: true,
  });
  sessionIds.push(sessionId);
  return { sessionId, answer: JSON.parse(stdout) as Obj };
}

/** The session's session_results.json as the portal serves it (its current triage). */
async function served(sessionId: string, client = clientId): Promise<Doc> {
  const res = await http(portal.url, 'GET', `/api/download?session=${sessionId}&client_id=${client}`, {
    headers: await admin(),
  });
  expect(res.status, res.text).toBe(200);
  return (typeof res.body === 'string' ? JSON.parse(res.body) : res.body) as Doc;
}

async function latestState(): Promise<LatestState> {
  const q = `target=${encodeURIComponent(target)}&client_id=${clientId}`;
  const res = await http<LatestState>(portal.url, 'GET', `/api/sessions/latest-state?${q}`, {
    headers: await admin(),
  });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

async function listing(client: string): Promise<{ total: number; sessions: Obj[] }> {
  const res = await http(portal.url, 'GET', `/api/sessions?client_id=${client}`, { headers: await admin() });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

const byFp = (entries: readonly Entry[] | undefined) => new Map((entries ?? []).map((e) => [e.fingerprint, e]));

/** The four decisions, as every view of them must state them (served entries and latest-state alike). */
function expectFourDecisions(entries: Map<string, Entry>, where: string): void {
  expect(entries.get(POSTGRES()), `${where}: PostgreSQL`).toMatchObject({ status: 'in_progress', note: NOTE });
  expect(entries.get(REDIS()), `${where}: Redis`).toMatchObject({
    exception_status: 'accepted',
    exception_reason: EXCEPTION_REASON,
    exception_expiry: EXPIRY,
    exception_approver: ADMIN_EMAIL,
    exception_source: 'person',
  });
  expect(entries.get(MEMCACHED()), `${where}: memcached`).toMatchObject({ status: 'deferred' });
  expect(entries.get(MEMCACHED_EXPOSED()), `${where}: memcached exposed`).toMatchObject({
    disposition: 'false_positive',
    disposition_reason: FP_REASON,
  });
}

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-records-netlab-data-'));
  // The data directory is named, so the fixture's close keeps it for the restarted portal.
  const [started, withKey] = await Promise.all([
    startNetlab({ smb: false }),
    startPortalWithKey({ tier: 'business', portal: { now: portalNow, env: { SVC_DATA_DIR: dataDir } } }),
  ]);
  lab = started;
  portal = withKey.portal;
  key = withKey.key;
  clientId = withKey.clientId;
  legacy = lab.hosts.legacy.ip;
  data = lab.hosts.data.ip;
  // inetutils telnetd makes version detection wait out every probe (triage-loop-netlab.test.ts).
  await lab.stopService('legacy', 'telnetd');
  assertInTestNetwork([legacy, data]);
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-records-netlab-'));
  await scannerTools(lab.wrapper, path.join(work, 'bin'), ['nmap', 'snmpwalk']);
  daemon = await agentOn(`${portal.url}/api/upload`);
}, 3 * 60_000);

afterAll(async () => {
  await daemon?.stop();
  lab?.stop();
  await portal?.close();
  for (const dir of [work, dataDir]) if (dir) await fs.rm(dir, { recursive: true, force: true });
});

describe('the findings of record outlive narrower scans, re-uploads and retention', () => {
  it('scan 1 (run_scan) uploads; the portal takes four decisions', { timeout: 8 * 60_000 }, async () => {
    const { sessionId } = await scan();
    const one = await served(sessionId);
    docs.push(one);
    target = one.metadata.target;
    const open = byFp(one.remediation);
    for (const f of [...FOUR(), ...FTP()]) expect(open.get(f)?.status, f).toBe('new');

    const res = await http(portal.url, 'PATCH', '/api/remediation-update', {
      headers: await admin(),
      json: {
        session_id: sessionId,
        client_id: clientId,
        items: [
          { fingerprint: POSTGRES(), status: 'in_progress', note: NOTE },
          { fingerprint: REDIS(), exception: { reason: EXCEPTION_REASON, expiry: EXPIRY } },
          { fingerprint: MEMCACHED(), status: 'deferred' },
          { fingerprint: MEMCACHED_EXPOSED(), disposition: { disposition: 'false_positive', reason: FP_REASON } },
        ],
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.results.map((r: { matched: number }) => r.matched)).toStrictEqual([1, 1, 1, 1]);
    const after = await served(sessionId);
    expectFourDecisions(byFp(after.remediation), 'scan 1 served after the triage');
    // The exception leaves the operational score, the false positive both scores (a status neither).
    expect(after.summary.risk_score_operational).toBeLessThan(after.summary.risk_score);
    expect(after.summary.risk_score).toBeLessThan(one.summary.risk_score);
  });

  it('a run_scan with other ports resolves none of them: they are not checked, their decisions hold', {
    timeout: 6 * 60_000,
  }, async () => {
    // Only the legacy host's FTP port: nothing of the four is on it (they are on the data host).
    const { sessionId, answer } = await scan('T:21');
    expect(answer['upload']?.['findings'], JSON.stringify(answer)).toMatchObject({ resolved: 0, reopened: 0 });
    const two = await served(sessionId);
    docs.push(two);
    expect((two as Obj)['coverage']?.ports?.tcp, JSON.stringify((two as Obj)['coverage'])).toBe('21');
    expect(two.remediation_resolved).toStrictEqual([]);
    const notChecked = byFp(two.remediation_not_checked);
    for (const f of FOUR()) expect(notChecked.has(f), `${f} not checked by the narrower scan`).toBe(true);
    expectFourDecisions(notChecked, 'scan 2 served, remediation_not_checked');
    // What it looked at it saw again.
    const open = byFp(two.remediation);
    for (const f of FTP()) expect(open.get(f)?.status, f).toBe('persistent');
    for (const f of FOUR()) expect(open.has(f)).toBe(false);

    const state = await latestState();
    expect(state.session_id).toBe(sessionId);
    expect(state.remediation_resolved.filter((e) => FOUR().includes(e.fingerprint))).toStrictEqual([]);
    expectFourDecisions(byFp(state.remediation), 'latest-state after scan 2');

    const records = await http(portal.url, 'GET', `/api/findings?client_id=${clientId}&limit=500`, {
      headers: await admin(),
    });
    expect(records.status, records.text).toBe(200);
    const rec = new Map((records.body.findings as Obj[]).map((r) => [r['fingerprint'], r]));
    for (const f of FOUR()) expect(rec.get(f), f).toMatchObject({ not_checked_in: sessionId, resolved_at: null });
  });

  it('push_session of the latest session keeps all four decisions', { timeout: 3 * 60_000 }, async () => {
    const before = await latestState();
    const { sessionId } = await command('push_session', {});
    expect(sessionId).toBe(sessionIds.at(-1));
    const after = await latestState();
    // The same file again: nothing changes.
    const pick = (s: LatestState) => FOUR().map((f) => byFp(s.remediation).get(f));
    expect(pick(after)).toStrictEqual(pick(before));
    expectFourDecisions(byFp(after.remediation), 'latest-state after push_session');
    const file = await served(sessionId);
    expectFourDecisions(byFp(file.remediation_not_checked), 'scan 2 served after push_session');
    expect(file.remediation_resolved).toStrictEqual([]);
  });

  it('the clock moves past retention: the sessions are swept, the records answer all four', {
    timeout: 3 * 60_000,
  }, async () => {
    await daemon.stop();
    await portal.close();
    shift += (RETENTION_DAYS + 1) * DAY_MS;
    // The same database and blobs; the sweep runs at start (then hourly).
    portal = await startTestPortal({
      now: portalNow,
      databaseUrl: portal.databaseUrl,
      env: { SVC_DATA_DIR: dataDir },
    });
    await untilValue(
      async () => ((await listing(clientId)).total === 0 ? true : undefined),
      'the retention sweep to remove every session of the client',
    );
    for (const id of sessionIds) {
      const res = await http(portal.url, 'GET', `/api/download?session=${id}&client_id=${clientId}`, {
        headers: await admin(),
      });
      expect(res.status, `${id} is gone`).toBe(404);
    }
    const state = await latestState();
    expect(state).toMatchObject({ session_id: sessionIds.at(-1), session_stored: false });
    expectFourDecisions(byFp(state.remediation), 'latest-state after the sweep');
    daemon = await agentOn(`${portal.url}/api/upload`, daemon);
  });

  it('the next scan carries all four; the removed FTP server is resolved, the planted old OpenSSH is new', {
    timeout: 8 * 60_000,
  }, async () => {
    await lab.stopService('legacy', 'vsftpd');
    // Port 22 is in the quick profile's list and free on the legacy host.
    await lab.startService('legacy', { ...bannerServer(legacy, 22, 'SSH-2.0-OpenSSH_7.4'), name: 'banner-old-ssh' });
    const { sessionId } = await scan();
    const three = await served(sessionId);
    docs.push(three);
    const open = byFp(three.remediation);
    expectFourDecisions(open, 'scan 3 served');
    for (const f of FOUR()) expect(open.get(f)?.first_seen, f).toBe(docs[0]!.metadata.session_id);
    expect(three.remediation_resolved.map((r) => r.fingerprint).sort()).toStrictEqual([...FTP()].sort());
    for (const r of three.remediation_resolved) expect(r.status).toBe('resolved');
    const planted = three.findings.filter((f) => f.host === legacy && f.port === 22);
    expect(planted.length).toBeGreaterThan(0);
    expect(planted.every((f) => f.rule_id.startsWith('outdated-software:openssh-'))).toBe(true);
    for (const f of planted) expect(open.get(f.fingerprint)?.status).toBe('new');
    expect(three.summary.risk_score_operational).toBeLessThan(three.summary.risk_score);
  });

  it("a professional key's upload claiming an approved exception lowers nothing", async () => {
    const pro: LicenseFixture = await createLicense(portal, { tier: 'professional' });
    const proClient = pro.record.client_id;
    const sessionId = newSessionId();
    const at = portalNow().toISOString();
    const findings = [
      { rule: 'redis-unauthenticated', port: 6379, severity: 'high', title: 'Redis without authentication' },
      { rule: 'database-exposed', port: 5432, severity: 'medium', title: 'PostgreSQL reachable from the network' },
    ].map((f, i) => ({
      id: `f-00${i + 1}`,
      rule_id: f.rule,
      title: f.title,
      severity: f.severity,
      host: data,
      port: f.port,
      protocol: 'tcp',
      fingerprint: fp(f.rule, data, f.port),
    }));
    const doc = {
      metadata: { session_id: sessionId, target: data, started_at: at, finished_at: at },
      // What the file claims: an operational score lowered by the exception it says was approved.
      summary: { risk_score: 40, risk_grade: 'C', risk_score_operational: 5, risk_grade_operational: 'A' },
      findings,
      remediation: findings.map((f, i) => ({
        title: f.title,
        severity: f.severity,
        host: f.host,
        finding_id: f.id,
        fingerprint: f.fingerprint,
        status: 'new',
        status_changed: at,
        note: '',
        first_seen: sessionId,
        prior_status: null,
        ...(i === 0
          ? {
              exception_status: 'accepted',
              exception_reason: 'Accepted until the appliance is replaced',
              exception_approver: 'admin@example.test',
              exception_approved_at: at,
              exception_expiry: EXPIRY,
              exception_expired: false,
            }
          : { exception_status: null }),
      })),
      remediation_resolved: [],
    };
    const up = await postUpload(portal.url, pro.key, sessionParts(doc));
    expect(up.status, up.text).toBe(200);

    // The file said 40 and 5; the portal states its own numbers, with no exception in effect.
    const [row] = (await listing(proClient)).sessions;
    expect(row?.['session_id']).toBe(sessionId);
    expect(row?.['exception_summary']).toMatchObject({
      total_exceptions: 0,
      by_status: { accepted: 0, expired: 0 },
      score_delta: 0,
      risk_score_operational: row?.['risk_score'],
    });
    const file = await served(sessionId, proClient);
    expect(file.summary.risk_score_operational).toBe(file.summary.risk_score);
    expect(file.summary.risk_score).toBe(row?.['risk_score']);
    expect(file.metadata['exception_summary']).toMatchObject({ total_exceptions: 0, by_status: { accepted: 0 } });
    for (const e of [...file.remediation, ...file.remediation_resolved]) {
      expect(e.exception_status ?? null, e.title).toBeNull();
      expect(e.exception_approver ?? null, e.title).toBeNull();
    }

    const rows = await http(portal.url, 'GET', `/api/sessions/${sessionId}/findings?client_id=${proClient}`, {
      headers: await admin(),
    });
    expect(rows.status, rows.text).toBe(200);
    const claimed = (rows.body.findings as Obj[]).find((f) => f['fingerprint'] === findings[0]!.fingerprint);
    expect(claimed?.['exception'] ?? null).toBeNull();
    const detail = await http(
      portal.url,
      'GET',
      `/api/sessions/${sessionId}/findings/${claimed?.['index']}?client_id=${proClient}`,
      { headers: await admin() },
    );
    expect(detail.status, detail.text).toBe(200);
    expect(detail.body.exception ?? null).toBeNull();
    // The claim is on record as a claim, with why it was not applied; no exception was ever set.
    const history = detail.body.history as Obj[];
    expect(history, JSON.stringify(history)).toContainEqual(
      expect.objectContaining({
        field: 'claim',
        source: 'upload',
        to: expect.stringMatching(/^exception: .*approver named: admin@example\.test/),
        detail: expect.stringMatching(/^not applied: .*remediation:update/),
      }),
    );
    expect(history.filter((h) => h['field'] === 'exception')).toStrictEqual([]);
  });

  it('the listing, the downloaded file, a SARIF export and the share page agree on the score', async () => {
    const { sessions } = await listing(clientId);
    expect(sessions.map((s) => s['session_id'])).toStrictEqual([sessionIds.at(-1)]);
    const row = sessions[0]!;
    const id = row['session_id'] as string;
    const listed = {
      actual: row['risk_score'],
      grade: row['risk_grade'],
      operational: row['exception_summary']['risk_score_operational'],
      operationalGrade: row['exception_summary']['risk_grade_operational'],
    };
    expect(listed.operational).toBeLessThan(listed.actual);

    const file = await served(id);
    expect({
      actual: file.summary.risk_score,
      grade: file.summary['risk_grade'],
      operational: file.summary.risk_score_operational,
      operationalGrade: file.summary['risk_grade_operational'],
    }).toStrictEqual(listed);
    expect(file.metadata['exception_summary']).toMatchObject({
      risk_score_operational: listed.operational,
      risk_grade_operational: listed.operationalGrade,
    });

    const sarif = await http(portal.url, 'GET', `/api/sessions/${id}/export?format=sarif&client_id=${clientId}`, {
      headers: await admin(),
    });
    expect(sarif.status, sarif.text).toBe(200);
    const props = (typeof sarif.body === 'string' ? JSON.parse(sarif.body) : sarif.body).runs[0].properties;
    expect({ actual: props.risk_score, operational: props.risk_score_operational }).toStrictEqual({
      actual: listed.actual,
      operational: listed.operational,
    });

    const token = new URL(row['share_url'] as string).searchParams.get('token');
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    const page = await fetch(`${portal.url}/share/?token=${token}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const line = /Current triage[^<]*:<\/strong>\s*([^<]*)/.exec(html)?.[1] ?? '';
    const m = /actual risk (\d+) \(([^)]+)\) · operational risk (\d+) \(([^)]+)\)/.exec(line);
    expect(m, line || html.slice(0, 2000)).not.toBeNull();
    expect({ actual: Number(m![1]), grade: m![2], operational: Number(m![3]), operationalGrade: m![4] }).toStrictEqual(
      listed,
    );
  });
});
