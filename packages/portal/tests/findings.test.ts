import { findingFingerprint, sha256Hex } from '@svc/protocol/node';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createLicense, createScopedUser, type LicenseFixture, uniqueClientId } from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import type { TestPortal } from '@svc/test-support/portal';
import { usePortalWithDb } from '@svc/test-support/portal-db';
import { newSessionId, postUpload, sessionParts } from '@svc/test-support/upload';
import { countUncountedSessions } from '../src/sessions/due-counts-backfill.ts';

/**
 * GET /api/sessions/{session_id}/findings, /findings/{index} and /blocks: the findings
 * index (sessions/findings.ts) filled at upload and read with the findings of record of its
 * target (docs/findings-of-record.md), kept in step with re-uploads and deletion, rebuilt for a
 * session stored before it; scoped like download.
 */

const fp = (rule_id: string, host: string, port: number, protocol = 'tcp') =>
  findingFingerprint({ rule_id, host, port, protocol });
const FP0 = fp('pg-open', '10.0.0.2', 5432);
const FP1 = fp('ssh-weak', '10.0.0.10', 22);
const FP2 = fp('http-old', '10.0.0.2', 80);
/** The record key of a finding without a rule: its title and host. */
const TITLE_KEY_F5 = sha256Hex(JSON.stringify(['svc-finding-title-v1', 'Weak TLS', '10.0.0.4']));

function doc(sessionId: string, clientId: string, extra: Record<string, unknown> = {}) {
  return {
    metadata: { session_id: sessionId, client_id: clientId, target: '10.0.0.0/24' },
    summary: { risk_score: 70, risk_grade: 'D' },
    findings: [
      {
        id: 'F0',
        rule_id: 'pg-open',
        title: 'PostgreSQL reachable',
        severity: 'critical',
        host: '10.0.0.2',
        hostname: 'db.acme',
        port: 5432,
        protocol: 'tcp',
        service: 'postgresql',
        cvss: 9.8,
        evidence: 'PostgreSQL 9.6 banner',
        description: 'The database answers from the network.',
        remediation: 'Firewall port 5432.',
        references: { cve: ['CVE-2024-0001'], cwe: ['CWE-284'], urls: ['https://example.test/pg'] },
      },
      {
        id: 'F1',
        rule_id: 'ssh-weak',
        title: 'SSH weak ciphers',
        severity: 'high',
        host: '10.0.0.10',
        port: 22,
        protocol: 'tcp',
        cvss: 7.5,
        references: { cve: ['CVE-2024-0001', 'cve-2023-0002'] },
      },
      {
        id: 'F2',
        rule_id: 'http-old',
        title: 'Old HTTP server',
        severity: 'medium',
        host: '10.0.0.2',
        port: 80,
        protocol: 'tcp',
        cvss: 5,
      },
      { id: 'F3', rule_id: 'dns-open', title: 'Open resolver', severity: 'low', host: 'web.acme' },
      {
        id: 'F4',
        rule_id: 'tls-info',
        title: 'TLS certificate details',
        severity: 'info',
        host: '10.0.0.3',
        port: 443,
        protocol: 'tcp',
      },
      { id: 'F5', title: 'Weak TLS', severity: 'high', host: '10.0.0.4', port: 8080, protocol: 'tcp' },
    ],
    remediation: [
      {
        title: 'PostgreSQL reachable',
        fingerprint: FP0,
        host: '10.0.0.2',
        status: 'in_progress',
        note: 'n0',
        first_seen: '20250101_000000',
      },
      {
        title: 'SSH weak ciphers',
        finding_id: 'F1',
        host: '10.0.0.10',
        status: 'new',
        exception_status: 'accepted',
        exception_reason: 'legacy clients',
        exception_approver: 'ciso@acme.test',
        exception_approved_at: '2025-01-01T00:00:00.000Z',
        exception_expiry: '2099-12-31',
      },
      {
        title: 'Old HTTP server',
        host: '10.0.0.2',
        status: 'persistent',
        first_seen: '20240101_000000',
        exception_status: 'accepted',
        exception_reason: 'old',
        exception_expiry: '2020-01-01',
      },
      { title: 'TLS certificate details', fingerprint: fp('tls-info', '10.0.0.3', 443), status: 'deferred' },
      { title: 'Weak TLS', status: 'persistent' },
    ],
    topology: { nodes: [{ id: '10.0.0.2' }], links: [] },
    ...extra,
  };
}

describe('findings endpoints', () => {
  let portal: TestPortal;
  let db: pg.Client;
  let keyA: LicenseFixture;
  let keyB: LicenseFixture;
  let admin: string;
  const sid = newSessionId();

  const get = (path: string, headers: Record<string, string>) =>
    http(portal.url, 'GET', `/api/sessions/${path}`, { headers });
  const list = async (query: string, headers = withToken(admin)) => {
    const res = await get(`${sid}/findings?client_id=${keyA.record.client_id}&${query}`, headers);
    expect(res.status, res.text).toBe(200);
    return res.body as { total: number; findings: { index: number }[]; next_cursor: string | null };
  };
  const order = async (query: string) => (await list(query)).findings.map((f) => f.index);
  async function upload(key: string, sessionId: string, clientId: string, extra: Record<string, unknown> = {}) {
    const res = await postUpload(portal.url, key, sessionParts(doc(sessionId, clientId, extra)));
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.text}`);
  }
  /** Rows of the session's findings (in_scan), not the records it resolved or did not check. */
  const indexRows = async (sessionId: string) =>
    Number(
      (await db.query('SELECT count(*) FROM session_findings WHERE session_id = $1 AND in_scan', [sessionId])).rows[0]
        .count,
    );
  /** Pages of details of the session, every client's (migration 0040). */
  const detailRows = async (sessionId: string) =>
    Number(
      (await db.query('SELECT count(*) FROM session_finding_detail_pages WHERE session_id = $1', [sessionId])).rows[0]
        .count,
    );

  usePortalWithDb(async (p) => {
    ({ portal, db } = p);
    admin = await portal.adminToken();
    keyA = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('acme') });
    keyB = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('beta') });
    await upload(keyA.key, sid, keyA.record.client_id);
  });

  it('indexes at upload and answers every field of a row, most severe first', async () => {
    expect(await indexRows(sid)).toBe(6);
    const page = await list('');
    expect(page.total).toBe(6);
    expect(page.next_cursor).toBeNull();
    expect(page.findings.map((f) => f.index)).toEqual([0, 5, 1, 2, 3, 4]);
    // The business key's file claimed in_progress and a note: applied, as set by that key.
    expect(page.findings[0]).toEqual({
      index: 0,
      fingerprint: FP0,
      title: 'PostgreSQL reachable',
      severity: 'critical',
      cvss: 9.8,
      cve_ids: ['CVE-2024-0001'],
      kev: false,
      kev_date_added: null,
      epss: null,
      epss_percentile: null,
      host: '10.0.0.2',
      hostname: 'db.acme',
      port: 5432,
      protocol: 'tcp',
      status: 'in_progress',
      tracked_by: 'fingerprint',
      first_seen: '20250101_000000',
      status_changed: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      note: 'n0',
      exception: null,
      in_scan: true,
      change: 'persistent',
      status_source: 'upload',
      disposition: null,
      last_seen: sid,
      resolved_at: null,
      reopened_at: null,
      // Critical: due 15 days after it was first seen (20250101_000000).
      due_date: '2025-01-16',
      overdue: true,
    });
    const byIndex = new Map(page.findings.map((f) => [f.index, f as Record<string, unknown>]));
    expect(byIndex.get(1)).toMatchObject({
      fingerprint: FP1,
      cve_ids: ['CVE-2023-0002', 'CVE-2024-0001'],
      tracked_by: 'fingerprint',
      // An exception the file set is shown as set by the key that uploaded it, never as the named approver's.
      exception: {
        state: 'active',
        reason: 'legacy clients',
        approver: `license:${keyA.record.id}`,
        approved_at: '2025-01-01T00:00:00.000Z',
        expiry: '2099-12-31',
        source: 'upload',
        claimed_approver: 'ciso@acme.test',
      },
    });
    expect(byIndex.get(2)).toMatchObject({
      fingerprint: FP2,
      tracked_by: 'fingerprint',
      exception: { state: 'expired' },
    });
    // Every finding has a record: one without an entry is new; one without a rule is keyed by title and host.
    expect(byIndex.get(3)).toMatchObject({ status: 'new', tracked_by: 'fingerprint', port: null, note: '' });
    expect(byIndex.get(5)).toMatchObject({
      fingerprint: TITLE_KEY_F5,
      status: 'new',
      tracked_by: 'fingerprint',
      cvss: null,
    });
  });

  it('filters: severity, status, exception, host, port, cve and text, each exactly', async () => {
    const cases: [string, number[]][] = [
      ['severity=high,critical', [0, 5, 1]],
      ['severity=INFO', [4]],
      ['status=untracked', []],
      ['status=new', [5, 1, 3]],
      ['status=in_progress,deferred', [0, 4]],
      ['exception=active', [1]],
      ['exception=expired', [2]],
      ['exception=none', [0, 5, 3, 4]],
      ['exception=active,expired', [1, 2]],
      ['host=DB.acme', [0]],
      ['host=10.0.0.2', [0, 2]],
      // A whole address only that address (10.0.0.1 is not 10.0.0.10); anything else the start of an address or name.
      ['host=10.0.0.1', []],
      ['host=10.0.0.10', [1]],
      ['host=10.0.0.1%20', []],
      ['host=10.0.0.', [0, 5, 1, 2, 4]],
      ['host=WEB', [3]],
      ['host=acme', []],
      ['port=22', [1]],
      ['cve=cve-2024-0001', [0, 1]],
      ['cve=CVE-2023-0002', [1]],
      ['q=weak', [5, 1]],
      ['q=postgresql', [0]],
      ['q=100%25', []],
      ['severity=medium&status=persistent', [2]],
      ['change=persistent', [0, 2]],
      ['change=new', [5, 1, 3, 4]],
      ['change=reopened,resolved,not_checked', []],
      ['overdue=true', [0, 2]],
      ['overdue=false', [5, 1, 3, 4]],
      ['disposition=false_positive', []],
      ['host=10.0.0&port=443&q=tls', [4]],
    ];
    for (const [query, expected] of cases) {
      const page = await list(query);
      expect(
        page.findings.map((f) => f.index),
        query,
      ).toEqual(expected);
      expect(page.total, query).toBe(expected.length);
    }
  });

  it('a first page counts what the upload did to each finding and its overdue findings, as the filters find them', async () => {
    // A target of its own, scanned twice: the second scan reports none of the first's findings,
    // whose records are rows of it too (resolved or not checked), overdue ones included.
    const key = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('gamma') });
    const client = key.record.client_id;
    const [first, second] = [newSessionId(), newSessionId()];
    await upload(key.key, first, client);
    await upload(key.key, second, client, { findings: [{ title: 'Fresh', severity: 'high' }] });
    type Counted = {
      changes: Record<string, number>;
      overdue: number;
      findings: { in_scan: boolean; fingerprint: string }[];
    };
    const page = async (session: string, query = '') => {
      const res = await get(`${session}/findings?client_id=${client}&limit=100&${query}`, withToken(admin));
      expect(res.status, res.text).toBe(200);
      return res.body as Counted & { total: number };
    };
    /** The counts of a first page against the filters, from the due counts and (forgotten) from the records. */
    const agree = async (step: string) => {
      const counted: Counted[] = [];
      for (const session of [first, second]) {
        // Counted when indexed, and kept since: the first page sums the due counts.
        const state = await db.query(
          'SELECT due_counted_key = file_key AS valid FROM session_findings_state WHERE session_id = $1',
          [session],
        );
        expect(state.rows, step).toEqual([{ valid: true }]);
        const fast = await page(session);
        for (const change of ['new', 'persistent', 'reopened', 'resolved', 'not_checked'])
          expect(fast.changes[change], `${step} ${change}`).toBe((await page(session, `change=${change}`)).total);
        const overdue = await page(session, 'overdue=true');
        expect(fast.overdue, step).toBe(overdue.findings.filter((f) => f.in_scan).length);
        await db.query('UPDATE session_findings_state SET due_counted_key = NULL WHERE session_id = $1', [session]);
        const slow = await page(session);
        expect([slow.changes, slow.overdue], `${step}, counted from the records`).toEqual([fast.changes, fast.overdue]);
        await db.query('UPDATE session_findings_state SET due_counted_key = file_key WHERE session_id = $1', [session]);
        counted.push(fast);
      }
      return counted;
    };

    const [firstScan, secondScan] = await agree('uploaded');
    expect(firstScan?.changes).toEqual({ new: 4, persistent: 2, reopened: 0, resolved: 0, not_checked: 0 });
    expect(firstScan?.overdue).toBe(2);
    expect(secondScan?.changes['new']).toBe(1);
    expect((secondScan?.changes['resolved'] ?? 0) + (secondScan?.changes['not_checked'] ?? 0)).toBe(6);
    // Its rows of the first scan's overdue records are overdue, and not counted: it did not find them.
    expect((await page(second, 'overdue=true')).findings.filter((f) => !f.in_scan).length).toBe(2);
    expect(secondScan?.overdue).toBe(0);

    // People's changes and the due days move the counts of the sessions holding those findings.
    const overdueFps = (await page(first, 'overdue=true')).findings.map(
      (f) => (f as { fingerprint: string }).fingerprint,
    );
    expect(overdueFps).toHaveLength(2);
    const bulk = async (fingerprints: string[], change: Record<string, unknown>) => {
      const res = await http(portal.url, 'POST', '/api/findings/bulk', {
        headers: withToken(admin),
        json: { client_id: client, fingerprints, change },
      });
      expect(res.status, res.text).toBe(200);
    };
    await bulk([overdueFps[0] as string], { exception: { reason: 'accepted for now', expiry: '2099-01-01' } });
    expect((await agree('an exception'))[0]?.overdue).toBe(1);
    await bulk([overdueFps[1] as string], { disposition: { disposition: 'false_positive', reason: 'decoy' } });
    expect((await agree('a false positive'))[0]?.overdue).toBe(0);
    await bulk([overdueFps[1] as string], { disposition: null });
    expect((await agree('the false positive taken back'))[0]?.overdue).toBe(1);
    const settings = async (dueDays: Record<string, number | null>) => {
      const res = await http(portal.url, 'PUT', '/api/remediation-settings', {
        headers: withToken(admin),
        json: { client_id: client, due_days: dueDays },
      });
      expect(res.status, res.text).toBe(200);
    };
    await settings({ critical: 3650, high: 3650, medium: 3650, low: 3650, info: null });
    expect((await agree('due days far off'))[0]?.overdue).toBe(0);
    // Due a day after first seen: the one first seen long ago without an exception is overdue again.
    await settings({ critical: 1, high: 1, medium: 1, low: 1, info: 1 });
    expect((await agree('due days of one day'))[0]?.overdue).toBe(1);
  });

  it('counts the overdue findings of sessions indexed before they were kept, as the start-up does', async () => {
    const key = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('delta') });
    const client = key.record.client_id;
    const sessions = [newSessionId(), newSessionId()];
    await upload(key.key, sessions[0] as string, client);
    await upload(key.key, sessions[1] as string, client, { findings: [{ title: 'Fresh', severity: 'high' }] });
    const kept = async () =>
      (
        await db.query(
          `SELECT st.session_id, st.due_counted_key = st.file_key AS valid, st.change_counts,
             (SELECT json_agg(json_build_array(d.due_date, d.exception_expiry, d.n) ORDER BY d.due_date, d.exception_expiry)
              FROM session_due_counts d WHERE d.client_id = st.client_id AND d.session_id = st.session_id) AS due
           FROM session_findings_state st WHERE st.session_id = ANY($1) ORDER BY st.session_id`,
          [sessions],
        )
      ).rows as { session_id: string; valid: boolean | null; change_counts: unknown; due: unknown }[];
    const counted = await kept();
    expect(counted.map((r) => r.valid)).toEqual([true, true]);
    expect(counted.some((r) => Array.isArray(r.due) && r.due.length > 0)).toBe(true);
    // As a database indexed before migration 0043 holds them.
    await db.query(
      'UPDATE session_findings_state SET due_counted_key = NULL, change_counts = NULL WHERE session_id = ANY($1)',
      [sessions],
    );
    await db.query('DELETE FROM session_due_counts WHERE session_id = ANY($1)', [sessions]);
    expect((await kept()).map((r) => [r.valid, r.change_counts, r.due])).toEqual([
      [null, null, null],
      [null, null, null],
    ]);
    await countUncountedSessions(portal.ctx, () => false);
    expect(await kept()).toEqual(counted);
  });

  it('sorts on each column both ways, ties in file order (reversed with desc)', async () => {
    const cases: [string, number[]][] = [
      ['sort=severity&order=asc', [4, 3, 2, 1, 5, 0]],
      ['sort=host', [2, 0, 4, 5, 1, 3]],
      ['sort=host&order=desc', [3, 1, 5, 4, 0, 2]],
      ['sort=port', [3, 1, 2, 4, 0, 5]],
      ['sort=cvss', [0, 1, 2, 5, 4, 3]],
      ['sort=cvss&order=asc', [3, 4, 5, 2, 1, 0]],
      ['sort=cve', [2, 3, 4, 5, 1, 0]],
      ['sort=status', [1, 3, 5, 2, 0, 4]],
      ['sort=first_seen', [2, 0, 1, 3, 4, 5]],
      ['sort=first_seen&order=desc', [5, 4, 3, 1, 0, 2]],
    ];
    for (const [query, expected] of cases) expect(await order(query), query).toEqual(expected);
  });

  it('pages with an opaque cursor until next_cursor is null, the total on every page', async () => {
    for (const [query, expected] of [
      ['', [0, 5, 1, 2, 3, 4]],
      ['sort=host', [2, 0, 4, 5, 1, 3]],
      ['sort=cve&order=desc', [0, 1, 5, 4, 3, 2]],
    ] as const) {
      const seen: number[] = [];
      let cursor: string | null = '';
      for (let i = 0; i < 4 && cursor !== null; i++) {
        const page = await list(`${query}&limit=4${cursor === '' ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
        expect(page.total).toBe(6);
        expect(page.findings.length).toBe(i === 0 ? 4 : 2);
        seen.push(...page.findings.map((f) => f.index));
        cursor = page.next_cursor;
      }
      expect(cursor).toBeNull();
      expect(seen, query).toEqual(expected);
    }
  });

  it('bad queries are 400 with the portal error shape, before any lookup', async () => {
    const first = await list('limit=1');
    const cursor = encodeURIComponent(first.next_cursor as string);
    const bad: [string, string][] = [
      ['severity=urgent', 'Invalid severity parameter "urgent": must be one of critical, high, medium, low, info'],
      [
        'status=open',
        'Invalid status parameter "open": must be one of new, persistent, in_progress, resolved, deferred, untracked',
      ],
      ['exception=maybe', 'Invalid exception parameter "maybe": must be one of active, expired, none'],
      ['sort=title', 'Invalid query: sort must be equal to constant'],
      ['order=up', 'Invalid query: order must be equal to constant'],
      ['limit=0', 'Invalid query: limit must be >= 1'],
      ['limit=201', 'Invalid query: limit must be <= 200'],
      ['port=abc', 'Invalid query: port must be integer'],
      ['port=70000', 'Invalid query: port must be <= 65535'],
      ['cve=2024-1', 'Invalid query: cve must match pattern "^[Cc][Vv][Ee]-\\d{4}-\\d{4,}$"'],
      ['bogus=1', 'Invalid query: querystring must NOT have additional properties (bogus)'],
      ['cursor=garbage', 'Invalid cursor parameter: use next_cursor of a page with the same sort and order'],
      [
        `cursor=${cursor}&sort=host`,
        'Invalid cursor parameter: use next_cursor of a page with the same sort and order',
      ],
    ];
    for (const [query, error] of bad) {
      const res = await get(`${sid}/findings?client_id=${keyA.record.client_id}&${query}`, withToken(admin));
      expect(res.status, query).toBe(400);
      expect(res.body, query).toEqual({ error });
    }
    const badId = await get('a.b/findings', withToken(admin));
    expect(badId.status).toBe(400);
    expect(badId.body).toEqual({ error: 'Invalid session_id parameter: must match ^[a-zA-Z0-9_-]+$' });
  });

  it('is scoped like download: 401 without a credential, 404 out of scope, 409 when ambiguous', async () => {
    const path = `${sid}/findings`;
    expect((await get(path, {})).status).toBe(401);
    expect((await get(path, withKey(keyA.key))).status).toBe(200);
    const other = await get(path, withKey(keyB.key));
    expect(other.status).toBe(404);
    expect(other.body).toEqual({ error: 'Session not found' });
    const userA = await createScopedUser(portal, [keyA.record.client_id]);
    const userB = await createScopedUser(portal, [keyB.record.client_id]);
    expect((await get(path, withToken(userA.token))).body.total).toBe(6);
    expect((await get(path, withToken(userB.token))).status).toBe(404);
    expect((await get(`${path}?client_id=${keyA.record.client_id}`, withToken(userB.token))).status).toBe(404);
    expect((await get(`${sid}/findings/0`, withToken(userB.token))).status).toBe(404);
    expect((await get(`${sid}/blocks`, withToken(userB.token))).status).toBe(404);

    // The same id under a second client: the admin names one.
    await upload(keyB.key, sid, keyB.record.client_id, {
      findings: [{ title: 'Only in B', severity: 'low', host: '10.1.0.1' }],
    });
    const ambiguous = await get(path, withToken(admin));
    expect(ambiguous.status).toBe(409);
    expect(ambiguous.body.client_ids).toEqual([keyA.record.client_id, keyB.record.client_id].sort());
    const b = await get(`${path}?client_id=${keyB.record.client_id}`, withToken(admin));
    expect(b.body).toMatchObject({ session_id: sid, client_id: keyB.record.client_id, total: 1 });
    expect(b.body.findings.map((f: { title: string }) => f.title)).toEqual(['Only in B']);
    expect((await get(path, withToken(userB.token))).body.total).toBe(1);
  });

  it('the detail answers evidence, references and the history of remediation updates', async () => {
    const patch = (items: unknown[]) =>
      http(portal.url, 'PATCH', '/api/remediation-update', {
        headers: withToken(admin),
        json: { session_id: sid, client_id: keyA.record.client_id, items },
      });
    expect((await patch([{ fingerprint: FP0, status: 'resolved', note: 'closed port' }])).status).toBe(200);
    expect(
      (await patch([{ fingerprint: FP2, exception: { reason: 'vendor fix due', expiry: '2099-06-30' } }])).status,
    ).toBe(200);
    expect((await patch([{ title: 'Weak TLS', status: 'in_progress' }])).status).toBe(200);

    const detail = await get(`${sid}/findings/0?client_id=${keyA.record.client_id}`, withToken(admin));
    expect(detail.status, detail.text).toBe(200);
    expect(detail.body).toMatchObject({
      index: 0,
      status: 'resolved',
      note: 'closed port',
      rule_id: 'pg-open',
      service: 'postgresql',
      evidence: 'PostgreSQL 9.6 banner',
      description: 'The database answers from the network.',
      remediation: 'Firewall port 5432.',
      references: { cve: ['CVE-2024-0001'], cwe: ['CWE-284'], urls: ['https://example.test/pg'] },
      prior_status: null,
    });
    const line = (l: Record<string, unknown>) => ({
      at: expect.stringMatching(/^\d{4}-/),
      exception: null,
      detail: null,
      status: null,
      ...l,
    });
    const key = `license:${keyA.record.id}`;
    expect(detail.body.history).toEqual([
      line({
        actor: key,
        source: 'upload',
        session_id: sid,
        field: 'status',
        from: 'new',
        to: 'in_progress',
        status: 'in_progress',
      }),
      line({ actor: key, source: 'upload', session_id: sid, field: 'note', from: null, to: 'n0' }),
      line({
        actor: 'admin@test.local',
        source: 'person',
        session_id: null,
        field: 'status',
        from: 'in_progress',
        to: 'resolved',
        status: 'resolved',
      }),
      line({
        actor: 'admin@test.local',
        source: 'person',
        session_id: null,
        field: 'note',
        from: 'n0',
        to: 'closed port',
      }),
    ]);
    const excepted = await get(`${sid}/findings/2?client_id=${keyA.record.client_id}`, withToken(admin));
    expect(excepted.body.exception).toMatchObject({ state: 'active', reason: 'vendor fix due', expiry: '2099-06-30' });
    expect(
      excepted.body.history.map((h: Record<string, unknown>) => [h['source'], h['field'], h['detail'], h['to']]),
    ).toEqual([
      ['upload', 'exception', 'accepted', 'old (until 2020-01-01)'],
      ['person', 'exception', 'changed', 'vendor fix due (until 2099-06-30)'],
    ]);
    expect(await order('status=resolved')).toEqual([0]);
    expect(await order('status=in_progress')).toEqual([5]);
    expect(await order('exception=active')).toEqual([1, 2]);
    expect((await get(`${sid}/findings/6?client_id=${keyA.record.client_id}`, withToken(admin))).status).toBe(404);
    expect((await get(`${sid}/findings/-1?client_id=${keyA.record.client_id}`, withToken(admin))).status).toBe(400);
  });

  it('a detail indexed a row per finding (a replica before migration 0040, mid-upgrade) is still shown', async () => {
    const ref = [keyA.record.client_id, sid];
    const page = await db.query(
      'SELECT details FROM session_finding_detail_pages WHERE client_id = $1 AND session_id = $2 AND page = 0',
      ref,
    );
    await db.query('DELETE FROM session_finding_detail_pages WHERE client_id = $1 AND session_id = $2', ref);
    await db.query(
      `INSERT INTO session_finding_details (client_id, session_id, ordinal, detail)
       SELECT $1, $2, key::int, value::jsonb FROM json_each($3::json)`,
      [...ref, page.rows[0].details],
    );
    const detail = await get(`${sid}/findings/0?client_id=${keyA.record.client_id}`, withToken(admin));
    expect(detail.status, detail.text).toBe(200);
    expect(detail.body).toMatchObject({ evidence: 'PostgreSQL 9.6 banner', rule_id: 'pg-open', service: 'postgresql' });
  });

  it('a session stored before the index is indexed on its first request; blocks come from the index', async () => {
    await db.query('DELETE FROM session_findings_state WHERE session_id = $1 AND client_id = $2', [
      sid,
      keyA.record.client_id,
    ]);
    // The index goes with its state row (migration 0037's trigger): only client B's is left.
    expect(await indexRows(sid)).toBe(1);
    expect(await detailRows(sid)).toBe(1);
    // The rows of the test before, written as a replica before migration 0040 wrote them, go too.
    expect((await db.query('SELECT count(*)::int AS n FROM session_finding_details')).rows[0].n).toBe(0);
    expect(await order('')).toEqual([0, 5, 1, 2, 3, 4]);
    expect(await order('status=resolved')).toEqual([0]);
    const blocks = await get(`${sid}/blocks?client_id=${keyA.record.client_id}`, withToken(admin));
    expect(blocks.body).toEqual({ topology: { nodes: [{ id: '10.0.0.2' }], links: [] }, orc_964: null });
  });

  it('a file whose findings[] holds a non-object is indexed with the records it did not report', async () => {
    const other = newSessionId();
    await upload(keyA.key, other, keyA.record.client_id, {
      findings: ['not a finding', { title: 'Fresh', severity: 'high', host: '10.2.0.1', evidence: 'seen' }],
    });
    const list = await get(`${other}/findings?client_id=${keyA.record.client_id}`, withToken(admin));
    expect(list.status, list.text).toBe(200);
    const rows = list.body.findings as { index: number; title: string; change: string | null }[];
    // The finding keeps its place in the file (1); the records it did not report come after the array.
    expect(rows.find((f) => f.title === 'Fresh')?.index).toBe(1);
    const elsewhere = rows.filter((f) => f.title !== 'Fresh').map((f) => f.index);
    expect(elsewhere.length).toBeGreaterThan(0);
    expect(Math.min(...elsewhere)).toBe(2);
    const fresh = await get(`${other}/findings/1?client_id=${keyA.record.client_id}`, withToken(admin));
    expect(fresh.body).toMatchObject({ title: 'Fresh', evidence: 'seen' });
  });

  it('a re-upload replaces the index; deleting the session removes it', async () => {
    const other = newSessionId();
    await upload(keyA.key, other, keyA.record.client_id);
    expect(await indexRows(other)).toBe(6);
    await upload(keyA.key, other, keyA.record.client_id, {
      findings: [{ title: 'Fresh', severity: 'high', host: '10.2.0.1' }],
    });
    expect(await indexRows(other)).toBe(1);
    // The target's other open records (PostgreSQL reopened by this session's first upload) were
    // not looked at (the file names another host only): listed as not checked.
    const notChecked = await get(
      `${other}/findings?client_id=${keyA.record.client_id}&change=not_checked`,
      withToken(admin),
    );
    expect(notChecked.body.total).toBe(6);
    const del = await http(portal.url, 'DELETE', `/api/sessions?session=${other}`, { headers: withToken(admin) });
    expect(del.status, del.text).toBe(200);
    expect(await indexRows(other)).toBe(0);
    expect(await detailRows(other)).toBe(0);
    const state = await db.query('SELECT count(*) FROM session_findings_state WHERE session_id = $1', [other]);
    expect(Number(state.rows[0].count)).toBe(0);
  });
});
