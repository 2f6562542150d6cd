import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '@svc/test-support/cli';
import { http, withKey, withToken } from '@svc/test-support/http';
import { ADMIN_EMAIL, createTestDatabase, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { type Doc, postUpload, sessionParts } from '@svc/test-support/upload';
import { until } from '@svc/test-support/wait';
import { type DatabaseHandle, openDatabase } from '../src/db/pool.ts';
import { createLogger } from '../src/logging.ts';
import { verifyArchive } from '../src/operations/backup/restore.ts';

/**
 * Migration 0017 on a database made by the code before the findings of record
 * (docs/findings-of-record.md#migration): tests/fixtures/pre-records/ holds a backup that the
 * portal of commit 58b7942 took after its users uploaded, triaged and excepted findings
 * (README.md there says how). It is restored with this code's `restore` into an empty database
 * and data directory, this portal starts on it, and everything is checked over HTTP: each
 * target's triage comes from its newest session, a professional key's exception stays a claim,
 * the older sessions are indexed and state the current triage, and uploads after the migration
 * keep every decision.
 */

const FIXTURE = path.resolve(import.meta.dirname, 'fixtures/pre-records');
const CLI = path.resolve(import.meta.dirname, '../src/operations/backup/cli.ts');
/** Test-only: the key-encryption key of the portal that took the backup (README.md there). */
const KEK = readFileSync(path.join(FIXTURE, 'key-encryption-key.txt'), 'utf8').trim();

interface Scenario {
  licenses: Record<'acme' | 'solo', { id: string; key: string; client_id: string }>;
  targets: Record<'net' | 'shop' | 'solo', string>;
  sessions: Record<'A1' | 'A2' | 'B1' | 'B2' | 'S1', string>;
  expiry: string;
  fingerprints: Record<string, string>;
  uploaded: Record<string, Doc>;
}
const S = JSON.parse(readFileSync(path.join(FIXTURE, 'scenario.json'), 'utf8')) as Scenario;
const FP = S.fingerprints as Record<
  'smb' | 'telnet' | 'openssh' | 'tls10' | 'ftp' | 'snmp' | 'nginx' | 'hsts' | 'banner' | 'ciphers' | 'relay' | 'axfr',
  string
>;
const { A1, A2, B1, B2, S1 } = S.sessions;
const ACME = S.licenses.acme.key;
const SOLO = S.licenses.solo.key;

type Entry = Record<string, any>;
const byFingerprint = (entries: Entry[]) => new Map(entries.map((e) => [e['fingerprint'] as string, e]));

/** A scanner-style session id (YYYYMMDD_HHMMSS) of an instant. */
const scannerId = (d: Date) => d.toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '_');

describe('findings of record: migrating a database made by the code before them', () => {
  let portal: TestPortal;
  let admin: string;
  const closers: (() => Promise<unknown>)[] = [];
  const dirs: string[] = [];
  const scratch = async (prefix: string) => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };
  let archive: string;

  let db: DatabaseHandle;
  const query = async <T>(text: string): Promise<T[]> => (await db.pool.query(text)).rows as T[];
  const get = async (route: string, headers: Record<string, string>) => {
    const res = await http(portal.url, 'GET', route, { headers });
    expect(res.status, `GET ${route}: ${res.text}`).toBe(200);
    return res.body;
  };
  const latestState = (key: string, target: string) =>
    get(`/api/sessions/latest-state?target=${encodeURIComponent(target)}`, withKey(key));
  const sessionFindings = async (key: string, sessionId: string): Promise<Map<string, Entry>> =>
    byFingerprint((await get(`/api/sessions/${sessionId}/findings?limit=200`, withKey(key))).findings);
  const served = (key: string, sessionId: string) =>
    get(`/api/download?session=${sessionId}&file=session_results.json`, withKey(key));
  const listing = async (clientId: string): Promise<Map<string, Entry>> => {
    const body = await get(`/api/sessions?client_id=${clientId}&limit=200`, withToken(admin));
    return new Map((body.sessions as Entry[]).map((s) => [s['session_id'] as string, s]));
  };
  const records = async (filter: string): Promise<Entry[]> =>
    (await get(`/api/findings?limit=500&${filter}`, withToken(admin))).findings;

  beforeAll(async () => {
    const dir = await scratch('svc-pre-records-');
    archive = path.join(dir, 'portal.tar');
    await fs.writeFile(archive, gunzipSync(readFileSync(path.join(FIXTURE, 'portal-58b7942.tar.gz'))));
    // This code's restore, as an operator runs it, into an empty database and data directory. The
    // archive predates authenticated backups (format version 1): the operator allows it.
    const databaseUrl = await createTestDatabase();
    const dataDir = await scratch('svc-pre-records-data-');
    const restored = await runCli(process.execPath, [CLI, 'restore', '--allow-unauthenticated', archive], {
      env: { DATABASE_URL: databaseUrl, SVC_DATA_DIR: dataDir, SVC_IDENTITY_KEY_ENCRYPTION_KEY: KEK },
      timeoutMs: 120_000,
    });
    expect(restored.stderr).toBe(
      `warning: ${archive} is not authenticated (written before backups were): it was accepted without a check for edits (--allow-unauthenticated)\n`,
    );
    expect(restored.code).toBe(0);
    portal = await startTestPortal({
      databaseUrl,
      env: { SVC_DATA_DIR: dataDir, SVC_IDENTITY_KEY_ENCRYPTION_KEY: KEK },
    });
    closers.push(() => portal.close());
    db = openDatabase(databaseUrl, { max: 2, logger: createLogger('silent') });
    closers.push(() => db.close());
    admin = await portal.adminToken();
  });

  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    for (const dir of dirs) await fs.rm(dir, { recursive: true, force: true });
  });

  it('restores an archive of schema 0016, which the portal migrates to 0017 at start', async () => {
    const auth = { keyEncryptionKey: Buffer.from(KEK, 'hex'), allowUnauthenticated: true };
    expect((await verifyArchive(archive, auth)).schema_migration).toBe('0016_findings_kev_epss');
    const applied = (await query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name')).map(
      (r) => r.name,
    );
    expect(applied).toContain('0017_findings_of_record');
    // The keys of the old portal are valid on this one.
    for (const key of [ACME, SOLO]) expect((await get('/api/license', withKey(key))).valid).toBe(true);
  });

  it("reads each target's triage from its newest session: statuses, notes, first seen, exceptions, resolved", async () => {
    const net = await latestState(ACME, S.targets.net);
    expect(net.session_id).toBe(A2);
    const open = byFingerprint(net.remediation);
    const resolved = byFingerprint(net.remediation_resolved);
    expect([...open.keys()].sort()).toEqual([FP.smb, FP.telnet, FP.openssh, FP.tls10, FP.snmp].sort());
    expect([...resolved.keys()]).toEqual([FP.ftp]);

    // The admin's status change and note on the newest session; its exception on the older one is not read.
    expect(open.get(FP.smb)).toMatchObject({
      status: 'in_progress',
      note: 'Patch window Friday 22:00',
      first_seen: A1,
      status_source: 'migration',
      exception_status: null,
    });
    // Set by the scanner's history: in_progress with a note; deferred (the older session's "resolved" lost).
    expect(open.get(FP.telnet)).toMatchObject({
      status: 'in_progress',
      status_changed: '2026-11-22T09:15:00.000Z',
      note: 'Replacing telnet with SSH on the PLC gateway',
      first_seen: A1,
    });
    expect(open.get(FP.openssh)).toMatchObject({
      status: 'deferred',
      status_changed: '2026-11-23T14:00:00.000Z',
      note: '',
      first_seen: A1,
    });
    // The exception the business key's file carried, with the approver the file named.
    expect(open.get(FP.tls10)).toMatchObject({
      status: 'persistent',
      first_seen: A1,
      exception_status: 'accepted',
      exception_reason: 'Kiosk clients need TLS 1.0 until their refresh',
      exception_approver: 'ciso@acme.example',
      exception_approved_at: '2026-11-21T10:00:00.000Z',
      exception_expiry: S.expiry,
      exception_source: 'migration',
    });
    // The exception the admin set in the portal, by fingerprint, on a finding new in that session.
    const snmp = open.get(FP.snmp)!;
    expect(snmp).toMatchObject({
      status: 'new',
      first_seen: A2,
      exception_status: 'accepted',
      exception_reason: 'Read-only community on the management VLAN',
      exception_approver: ADMIN_EMAIL,
      exception_expiry: S.expiry,
      exception_source: 'migration',
    });
    expect(Date.parse(snmp['exception_approved_at'])).toBeGreaterThan(Date.parse('2026-11-26T02:31:00Z'));
    // The scanner's remediation_resolved entry: a resolved record, its note and first sighting kept.
    expect(resolved.get(FP.ftp)).toMatchObject({
      status: 'resolved',
      note: 'FTP service removed',
      first_seen: A1,
      exception_status: null,
    });

    // shop.acme.example: B1 was uploaded after B2, but B2 is the newer scan.
    const shop = await latestState(ACME, S.targets.shop);
    expect(shop.session_id).toBe(B2);
    const shopOpen = byFingerprint(shop.remediation);
    const shopResolved = byFingerprint(shop.remediation_resolved);
    expect([...shopOpen.keys()].sort()).toEqual([FP.nginx, FP.ciphers].sort());
    expect([...shopResolved.keys()].sort()).toEqual([FP.hsts, FP.banner].sort());
    expect(shopOpen.get(FP.nginx)).toMatchObject({
      status: 'in_progress',
      note: 'Upgrade to nginx 1.27 scheduled',
      first_seen: B1,
    });
    expect(shopOpen.get(FP.ciphers)).toMatchObject({
      status: 'new',
      first_seen: B2,
      exception_status: 'accepted',
      exception_approver: 'cto@acme.example',
      exception_reason: 'Payment terminal needs CBC suites',
    });
    // Marked resolved in the portal by the admin, with a note: a resolved record.
    expect(shopResolved.get(FP.hsts)).toMatchObject({ status: 'resolved', note: 'HSTS enabled at the CDN' });
    expect(shopResolved.get(FP.banner)).toMatchObject({ status: 'resolved', first_seen: B1 });
    // Known to fail (records/seed.ts, see the report): a finding of the newest session that a person
    // marked resolved keeps what its entry says: first seen in B1, resolved after that scan.
    expect(shopResolved.get(FP.hsts)!['first_seen']).toBe(B1);
    expect(Date.parse(shopResolved.get(FP.hsts)!['status_changed'])).toBeGreaterThan(
      Date.parse('2026-11-25T03:31:00Z'),
    );
  });

  it("keeps the professional client's exception as a claim that was not applied", async () => {
    const state = await latestState(SOLO, S.targets.solo);
    expect(state.session_id).toBe(S1);
    const relay = byFingerprint(state.remediation).get(FP.relay);
    expect(relay).toMatchObject({ status: 'new', exception_status: null, exception_approver: null });

    const rows = await sessionFindings(SOLO, S1);
    const row = rows.get(FP.relay)!;
    expect(row.exception).toBe(null);
    const detail = await get(`/api/sessions/${S1}/findings/${row.index}`, withKey(SOLO));
    const claims = (detail.history as Entry[]).filter((h) => h['field'] === 'claim');
    expect(claims).toHaveLength(1);
    expect(claims[0]).toMatchObject({ source: 'migration', session_id: S1 });
    expect(claims[0]!['to'] ?? '').toContain('Relay needed by the old scanner appliance');
    expect(claims[0]!['detail']).toMatch(/remediation:update/);
    expect((detail.history as Entry[]).filter((h) => h['field'] === 'exception')).toEqual([]);

    // Its scores: the operational one is the actual one, whatever the file stated.
    const file = S.uploaded[S1]!['summary'];
    expect(file.risk_score_operational).toBeLessThan(file.risk_score);
    const session = (await listing('solo')).get(S1)!;
    expect(session.risk_score).toBe(file.risk_score);
    expect(session.exception_summary).toMatchObject({
      total_exceptions: 0,
      risk_score_operational: file.risk_score,
      score_delta: 0,
    });
    const doc = await served(SOLO, S1);
    expect(doc.summary.risk_score_operational).toBe(doc.summary.risk_score);
    expect(doc.summary.risk_score).toBe(file.risk_score);
    expect(byFingerprint(doc.remediation).get(FP.relay)).toMatchObject({ exception_status: null });
    const excepted = await records('exception=accepted');
    expect(excepted.map((r) => r['fingerprint']).sort()).toEqual([FP.tls10, FP.snmp, FP.ciphers].sort());
  });

  it('indexes every stored session in the background; the older ones state the current triage', async () => {
    const sessions = (await query<{ n: string }>('SELECT count(*) AS n FROM sessions'))[0]!;
    expect(Number(sessions.n)).toBe(5);
    const unindexed = async () =>
      Number(
        (
          await query<{ n: string }>(
            `SELECT count(*) AS n FROM sessions s WHERE NOT EXISTS (SELECT 1 FROM session_findings_state st
               WHERE st.client_id = s.client_id AND st.session_id = s.session_id)`,
          )
        )[0]!.n,
      );
    // Nothing has read A1, B1 or B2 yet: only the backfill started with the portal indexes them.
    await until(
      async () => (await unindexed()) === 0,
      60_000,
      () => 'every stored session indexed',
    );
    const seeded = await query<{ client_id: string; target: string; last_session_id: string }>(
      'SELECT client_id, target, last_session_id FROM finding_targets WHERE seeded_at IS NOT NULL ORDER BY 1, 2',
    );
    expect(seeded).toEqual([
      { client_id: 'acme', target: S.targets.net, last_session_id: A2 },
      { client_id: 'acme', target: S.targets.shop, last_session_id: B2 },
      { client_id: 'solo', target: S.targets.solo, last_session_id: S1 },
    ]);

    // A1: the admin resolved Outdated OpenSSH and excepted SMBv1 there; the newest session (A2) says otherwise.
    const a1 = await sessionFindings(ACME, A1);
    expect([...a1.keys()].sort()).toEqual([FP.smb, FP.telnet, FP.openssh, FP.tls10, FP.ftp].sort());
    expect(a1.get(FP.smb)).toMatchObject({ status: 'in_progress', note: 'Patch window Friday 22:00', exception: null });
    expect(a1.get(FP.telnet)).toMatchObject({
      status: 'in_progress',
      note: 'Replacing telnet with SSH on the PLC gateway',
    });
    expect(a1.get(FP.openssh)).toMatchObject({ status: 'deferred', note: '' });
    expect(a1.get(FP.tls10)).toMatchObject({
      status: 'persistent',
      exception: { state: 'active', approver: 'ciso@acme.example', expiry: S.expiry },
    });
    expect(a1.get(FP.ftp)).toMatchObject({ status: 'resolved', note: 'FTP service removed' });
    for (const row of a1.values()) expect(row.first_seen).toBe(A1);

    const b1 = await sessionFindings(ACME, B1);
    expect(b1.get(FP.nginx)).toMatchObject({ status: 'in_progress', note: 'Upgrade to nginx 1.27 scheduled' });
    expect(b1.get(FP.hsts)).toMatchObject({ status: 'resolved', note: 'HSTS enabled at the CDN' });
    expect(b1.get(FP.banner)).toMatchObject({ status: 'resolved' });

    // The served file of the older session: its findings' entries as their records stand.
    const doc = await served(ACME, A1);
    const open = byFingerprint(doc.remediation);
    const resolved = byFingerprint(doc.remediation_resolved);
    expect([...open.keys()].sort()).toEqual([FP.smb, FP.telnet, FP.openssh, FP.tls10].sort());
    expect(open.get(FP.smb)).toMatchObject({ status: 'in_progress', exception_status: null });
    expect(open.get(FP.openssh)).toMatchObject({ status: 'deferred', note: '' });
    expect(resolved.get(FP.ftp)).toMatchObject({ status: 'resolved', note: 'FTP service removed' });
    expect(doc.metadata.remediation_summary.by_status).toEqual({
      new: 0,
      persistent: 1,
      in_progress: 2,
      deferred: 1,
      resolved: 1,
    });
    expect(doc.metadata.exception_summary.total_exceptions).toBe(1);

    // The listing states the same numbers for every session.
    const acme = await listing('acme');
    expect([...acme.keys()].sort()).toEqual([A1, A2, B1, B2].sort());
    expect(acme.get(A1)!.remediation_summary.by_status).toEqual(doc.metadata.remediation_summary.by_status);
    expect(acme.get(A1)!.exception_summary).toMatchObject({
      total_exceptions: 1,
      by_status: { accepted: 1, expired: 0 },
    });
    expect(acme.get(A2)!.remediation_summary.by_status).toMatchObject({
      new: 1,
      persistent: 1,
      in_progress: 2,
      deferred: 1,
    });
    expect(acme.get(A2)!.exception_summary).toMatchObject({
      total_exceptions: 2,
      by_status: { accepted: 2, expired: 0 },
    });
    expect(acme.get(B1)!.remediation_summary.by_status).toMatchObject({ in_progress: 1, resolved: 2 });
    expect(acme.get(B2)!.remediation_summary.by_status).toMatchObject({ in_progress: 1, resolved: 1, new: 1 });
    expect(acme.get(B2)!.exception_summary).toMatchObject({ total_exceptions: 1 });

    // The newest session served: the admin's decisions, and the person's "resolved" listed once.
    const b2 = await served(ACME, B2);
    expect(byFingerprint(b2.remediation).get(FP.nginx)).toMatchObject({ status: 'in_progress' });
    expect(b2.remediation_resolved.map((e: Entry) => e['fingerprint']).sort()).toEqual([FP.hsts, FP.banner].sort());
    // Each finding of A1 once: Outdated OpenSSH is open (deferred), not also resolved as the stored file says.
    expect(doc.remediation_resolved.map((e: Entry) => e['fingerprint'])).toEqual([FP.ftp]);
  });

  it('lists the records in the portfolio with their decisions', async () => {
    const acme = byFingerprint(await records('client_id=acme'));
    expect(acme.size).toBe(10);
    expect(acme.get(FP.smb)).toMatchObject({
      target: S.targets.net,
      status: 'in_progress',
      status_source: 'migration',
      note: 'Patch window Friday 22:00',
      exception: null,
      first_seen: A1,
      first_seen_at: '2026-11-20T02:00:00.000Z',
      last_seen: A2,
    });
    expect(acme.get(FP.snmp)).toMatchObject({
      status: 'new',
      first_seen: A2,
      exception: { state: 'accepted', approver: ADMIN_EMAIL, source: 'migration', expiry: S.expiry },
    });
    expect(acme.get(FP.tls10)!.exception).toMatchObject({ approver: 'ciso@acme.example', claimed_approver: null });
    expect(acme.get(FP.openssh)).toMatchObject({ status: 'deferred' });
    expect(acme.get(FP.ftp)).toMatchObject({ status: 'resolved', resolved_in: A2 });
    expect(acme.get(FP.hsts)).toMatchObject({ target: S.targets.shop, status: 'resolved' });
    const solo = byFingerprint(await records('client_id=solo'));
    expect(solo.get(FP.relay)).toMatchObject({ status: 'new', exception: null });
  });

  it('keeps every decision through a re-upload and the next scan after the migration', async () => {
    const decisions = (entries: Entry[]) =>
      [...byFingerprint(entries).values()].map((e) => ({
        fingerprint: e['fingerprint'],
        status: e['status'],
        note: e['note'],
        first_seen: e['first_seen'],
        exception: [e['exception_status'], e['exception_reason'], e['exception_approver'], e['exception_expiry']],
      }));
    const before = await latestState(ACME, S.targets.net);

    // svc upload of A2's directory again: the file as the scanner wrote it, without the portal's triage.
    const again = await postUpload(portal.url, ACME, sessionParts(S.uploaded[A2]!));
    expect(again.status, again.text).toBe(200);
    const afterReupload = await latestState(ACME, S.targets.net);
    expect(decisions(afterReupload.remediation)).toEqual(decisions(before.remediation));
    expect(decisions(afterReupload.remediation_resolved)).toEqual(decisions(before.remediation_resolved));
    const a2 = byFingerprint((await served(ACME, A2)).remediation);
    expect(a2.get(FP.smb)).toMatchObject({ status: 'in_progress', note: 'Patch window Friday 22:00' });
    expect(a2.get(FP.snmp)).toMatchObject({ exception_status: 'accepted', exception_approver: ADMIN_EMAIL });

    // The next scan of each acme target: a scanner without history (every entry new), after the upgrade.
    const now = new Date();
    const next = (prior: Doc, sessionId: string, at: Date): Doc => {
      const doc = structuredClone(prior);
      doc['metadata'] = {
        ...doc['metadata'],
        session_id: sessionId,
        started_at: at.toISOString(),
        finished_at: at.toISOString(),
      };
      doc['remediation'] = (doc['remediation'] as Entry[]).map((e) => ({
        title: e['title'],
        severity: e['severity'],
        finding_id: e['finding_id'],
        fingerprint: e['fingerprint'],
        host: e['host'],
        status: 'new',
        status_changed: at.toISOString(),
        note: '',
        first_seen: sessionId,
        prior_status: null,
      }));
      doc['remediation_resolved'] = [];
      return doc;
    };
    const A3 = scannerId(now);
    const netScan = await postUpload(portal.url, ACME, sessionParts(next(S.uploaded[A2]!, A3, now)));
    expect(netScan.status, netScan.text).toBe(200);
    expect(netScan.body.findings).toEqual({ new: 0, persistent: 5, reopened: 0, resolved: 0, not_checked: 0 });
    const net = await latestState(ACME, S.targets.net);
    expect(net.session_id).toBe(A3);
    const open = byFingerprint(net.remediation);
    expect(open.get(FP.smb)).toMatchObject({
      status: 'in_progress',
      note: 'Patch window Friday 22:00',
      first_seen: A1,
    });
    expect(open.get(FP.telnet)).toMatchObject({
      status: 'in_progress',
      note: 'Replacing telnet with SSH on the PLC gateway',
      first_seen: A1,
    });
    expect(open.get(FP.openssh)).toMatchObject({ status: 'deferred', first_seen: A1 });
    expect(open.get(FP.tls10)).toMatchObject({
      status: 'persistent',
      exception_status: 'accepted',
      exception_approver: 'ciso@acme.example',
      first_seen: A1,
    });
    expect(open.get(FP.snmp)).toMatchObject({
      status: 'persistent',
      exception_status: 'accepted',
      exception_approver: ADMIN_EMAIL,
      first_seen: A2,
    });
    expect(byFingerprint(net.remediation_resolved).get(FP.ftp)).toMatchObject({
      status: 'resolved',
      note: 'FTP service removed',
    });
    // The new session's own view and numbers read the same records.
    const a3 = await sessionFindings(ACME, A3);
    expect(a3.get(FP.smb)).toMatchObject({ status: 'in_progress', first_seen: A1 });
    const listed = (await listing('acme')).get(A3)!;
    expect(listed.remediation_summary.by_status).toMatchObject({ new: 0, persistent: 2, in_progress: 2, deferred: 1 });
    expect(listed.exception_summary).toMatchObject({ total_exceptions: 2 });

    // shop.acme.example: the finding a person resolved is seen again: reopened, its note kept.
    const B3 = scannerId(new Date(now.getTime() + 1000));
    const shopScan = await postUpload(
      portal.url,
      ACME,
      sessionParts(next(S.uploaded[B2]!, B3, new Date(now.getTime() + 1000))),
    );
    expect(shopScan.status, shopScan.text).toBe(200);
    expect(shopScan.body.findings).toEqual({ new: 0, persistent: 2, reopened: 1, resolved: 0, not_checked: 0 });
    const shop = await latestState(ACME, S.targets.shop);
    const shopOpen = byFingerprint(shop.remediation);
    expect(shopOpen.get(FP.hsts)).toMatchObject({ status: 'persistent', note: 'HSTS enabled at the CDN' });
    expect(shopOpen.get(FP.hsts)!['reopened_at']).not.toBe(null);
    expect(shopOpen.get(FP.nginx)).toMatchObject({ status: 'in_progress', note: 'Upgrade to nginx 1.27 scheduled' });
    expect(shopOpen.get(FP.ciphers)).toMatchObject({
      exception_status: 'accepted',
      exception_approver: 'cto@acme.example',
    });
    expect(byFingerprint(shop.remediation_resolved).get(FP.banner)).toMatchObject({ status: 'resolved' });

    // solo uploads the same forged file again: still a claim, once in the history, no exception.
    const soloAgain = await postUpload(portal.url, SOLO, sessionParts(S.uploaded[S1]!));
    expect(soloAgain.status, soloAgain.text).toBe(200);
    const solo = await latestState(SOLO, S.targets.solo);
    expect(byFingerprint(solo.remediation).get(FP.relay)).toMatchObject({ exception_status: null });
    const soloSession = (await listing('solo')).get(S1)!;
    expect(soloSession.exception_summary.risk_score_operational).toBe(soloSession.risk_score);
    const row = (await sessionFindings(SOLO, S1)).get(FP.relay)!;
    const detail = await get(`/api/sessions/${S1}/findings/${row.index}`, withKey(SOLO));
    expect(row.exception).toBe(null);
    expect((detail.history as Entry[]).filter((h) => h['field'] === 'exception')).toEqual([]);
    expect((detail.history as Entry[]).filter((h) => h['field'] === 'claim')).toHaveLength(1);
    // The finding reopened keeps its first sighting (B1).
    expect(shopOpen.get(FP.hsts)!['first_seen']).toBe(B1);
  });
});
