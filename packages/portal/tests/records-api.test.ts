import { findingFingerprint } from '@svc/protocol/node';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import {
  createLicense,
  createScopedUser,
  DAY_MS,
  FakeClock,
  type LicenseFixture,
  type ScopedUser,
  uniqueClientId,
} from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { ADMIN_EMAIL, ADMIN_PASSWORD, login, type TestPortal } from '@svc/test-support/portal';
import { usePortalWithDb } from '@svc/test-support/portal-db';
import { type Doc, scanDocument } from '@svc/test-support/upload';
import { until } from '@svc/test-support/wait';
import { lockTarget } from '../src/records/queries.ts';
import { sweepStaleRecords } from '../src/records/retention.ts';

/**
 * The APIs over the findings of record (docs/findings-of-record.md): the portfolio across a
 * caller's scope and its summary, the bulk change, the due-date settings, the targets with their
 * coverage, purging a target and the retention of resolved records.
 */

const fp = (rule: string, host: string, port: number) =>
  findingFingerprint({ rule_id: rule, host, port, protocol: 'tcp' });

/** A scan of `target` with `n` findings on hosts 10.<net>.0.<i>, severities in turn. */
function scan(sessionId: string, target: string, net: number, n: number, extra: Doc[] = []): Doc {
  const sev = ['critical', 'high', 'medium', 'low'];
  const findings = [
    ...Array.from({ length: n }, (_, i) => ({
      id: `f-${i}`,
      rule_id: `rule-${i % 3}`,
      title: `Weakness ${i % 3}`,
      severity: sev[i % 4],
      host: `10.${net}.0.${i + 1}`,
      port: 443,
      protocol: 'tcp',
      ...(i === 0 ? { kev: true, epss: 0.9, references: { cve: ['CVE-2024-3400'] } } : {}),
      ...(i === 1 ? { epss: 0.05 } : {}),
    })),
    ...extra,
  ];
  return scanDocument(sessionId, target, findings, { source: 'svc-scan' });
}

describe('findings of record: portfolio, bulk, settings, targets, purge', () => {
  const clock = new FakeClock(new Date('2026-06-01T12:00:00.000Z'));
  let portal: TestPortal;
  let db: pg.Client;
  let acme: LicenseFixture;
  let beta: LicenseFixture;
  let acmeUser: ScopedUser;
  /** The admin's token, minted again once the clock has moved past its hour. */
  let cached: { token: string; at: number } | null = null;
  const admin = async () => {
    if (cached === null || clock.now().getTime() - cached.at > 30 * 60_000)
      cached = { token: await login(portal.url, ADMIN_EMAIL, ADMIN_PASSWORD), at: clock.now().getTime() };
    return cached.token;
  };

  async function upload(key: string, doc: Doc) {
    const form = new FormData();
    form.append('session_json', new Blob([JSON.stringify(doc)], { type: 'application/json' }), 'session_results.json');
    const res = await fetch(`${portal.url}/api/upload`, { method: 'POST', headers: withKey(key), body: form });
    expect(res.status, await res.clone().text()).toBe(200);
  }
  const get = async (path: string, token?: string) =>
    http(portal.url, 'GET', path, { headers: withToken(token ?? (await admin())) });
  const allPages = async (query: string, token?: string) => {
    const out: Doc[] = [];
    let cursor: string | null = '';
    for (let i = 0; i < 20 && cursor !== null; i++) {
      const res = await get(
        `/api/findings?${query}&limit=3${cursor === '' ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
        token,
      );
      expect(res.status, res.text).toBe(200);
      out.push(...res.body.findings);
      cursor = res.body.next_cursor;
    }
    return out;
  };

  usePortalWithDb(
    async (p) => {
      ({ portal, db } = p);
      acme = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('acme') });
      beta = await createLicense(portal, { tier: 'msp', client_id: uniqueClientId('beta') });
      await upload(acme.key, scan('20260501_120000', 'acme-net', 1, 6));
      await upload(acme.key, scan('20260501_130000', 'acme-dmz', 2, 2));
      await upload(beta.key, scan('20260515_120000', 'beta-net', 3, 4));
      acmeUser = await createScopedUser(portal, [acme.record.client_id]);
    },
    { now: clock.now },
  );

  it('lists the records across the caller’s scope, most severe first, page by page', async () => {
    const all = await allPages('');
    expect(all).toHaveLength(12);
    const key = (s: string | null) => ['critical', 'high', 'medium', 'low', 'info'].indexOf(s ?? 'info');
    expect(all.map((f) => key(f.severity))).toEqual([...all.map((f) => key(f.severity))].sort((a, b) => a - b));
    // Pages of 3 walk the same rows in the same order as one page of all: none twice, none skipped.
    const whole = await get('/api/findings?limit=100');
    const ids = (rows: Doc[]) => rows.map((f) => `${f.target}/${f.fingerprint}`);
    expect(ids(all)).toEqual(ids(whole.body.findings));
    expect(new Set(ids(all)).size).toBe(12);
    const mine = await allPages('', acmeUser.token);
    expect(mine.map((f) => f.client_id)).toEqual(Array(8).fill(acme.record.client_id));
    expect(mine[0]).toMatchObject({
      target: expect.any(String),
      status: 'new',
      status_source: 'scan',
      first_seen: expect.stringMatching(/^20260501_/),
      seen_count: 1,
      exception: null,
      disposition: null,
    });
    // Another client named by a scoped user: 403.
    const other = await get(`/api/findings?client_id=${beta.record.client_id}`, acmeUser.token);
    expect(other.status).toBe(403);
  });

  it('filters: severity, KEV, EPSS, host exact and prefix, target, first seen, overdue, due by', async () => {
    const q = async (query: string) => (await allPages(query)).map((f) => `${f.target} ${f.host}`).sort();
    expect(await q('severity=critical')).toEqual([
      'acme-dmz 10.2.0.1',
      'acme-net 10.1.0.1',
      'acme-net 10.1.0.5',
      'beta-net 10.3.0.1',
    ]);
    expect(await q('kev=true')).toEqual(['acme-dmz 10.2.0.1', 'acme-net 10.1.0.1', 'beta-net 10.3.0.1']);
    expect(await q('host=10.1.0.2')).toEqual(['acme-net 10.1.0.2']);
    // `host` as the session findings read it (protocol host-match.ts): a whole address exactly, anything else as a start.
    expect(await q('host=10.1.0.1')).toEqual(['acme-net 10.1.0.1']);
    expect(await q('host=10.2.0.')).toEqual(['acme-dmz 10.2.0.1', 'acme-dmz 10.2.0.2']);
    expect(await q('host=10.2.0')).toEqual(['acme-dmz 10.2.0.1', 'acme-dmz 10.2.0.2']);
    expect(await q('host_prefix=10.2.')).toEqual(['acme-dmz 10.2.0.1', 'acme-dmz 10.2.0.2']);
    expect(await q(`client_id=${acme.record.client_id}&target=acme-dmz`)).toEqual([
      'acme-dmz 10.2.0.1',
      'acme-dmz 10.2.0.2',
    ]);
    expect(await q('first_seen_from=2026-05-10T00:00:00Z')).toHaveLength(4);
    // Critical due 15 days after first seen, high 30: overdue on 2026-06-01; mediums and lows not yet.
    expect(await q('overdue=true')).toEqual([
      'acme-dmz 10.2.0.1',
      'acme-dmz 10.2.0.2',
      'acme-net 10.1.0.1',
      'acme-net 10.1.0.2',
      'acme-net 10.1.0.5',
      'acme-net 10.1.0.6',
      'beta-net 10.3.0.1',
    ]);
    // EPSS at least, and due by a day (inclusive): records without either are left out.
    expect(await q('epss_min=0.5')).toEqual(['acme-dmz 10.2.0.1', 'acme-net 10.1.0.1', 'beta-net 10.3.0.1']);
    expect(await q('epss_min=0.01')).toHaveLength(6);
    expect(await q('due_before=2026-05-16')).toEqual(['acme-dmz 10.2.0.1', 'acme-net 10.1.0.1', 'acme-net 10.1.0.5']);
    expect((await get('/api/findings/summary?due_before=2026-05-16')).body.total).toBe(3);
    const badDay = await get('/api/findings?due_before=2026-02-30');
    expect(badDay.status).toBe(400);
    expect(badDay.body.error).toBe('Invalid due_before parameter: must be a day (YYYY-MM-DD)');
    expect((await get('/api/findings?epss_min=2')).status).toBe(400);
    const bad = await get('/api/findings?status=fixed');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/Invalid status parameter "fixed"/);
    expect((await get('/api/findings?cursor=garbage')).status).toBe(400);
  });

  it('one bulk request changes many findings by fingerprints, in one transaction, one audit event each', async () => {
    const client = acme.record.client_id;
    const fps = [fp('rule-0', '10.1.0.1', 443), fp('rule-1', '10.1.0.2', 443), fp('rule-2', '10.1.0.3', 443)];
    const unknown = 'e'.repeat(64);
    const token = await admin();
    const res = await http(portal.url, 'POST', '/api/findings/bulk', {
      headers: withToken(token),
      json: {
        client_id: client,
        fingerprints: [...fps, unknown],
        change: { status: 'in_progress', note: 'sprint 12' },
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ success: true, matched: 3, changed: 3, unmatched: [unknown] });
    const events = (
      await db.query(
        "SELECT data FROM audit_events WHERE event_type = 'remediation_updated' AND data->>'bulk' = 'true' AND client_id = $1",
        [client],
      )
    ).rows;
    expect(events.map((e) => e.data.fingerprint).sort()).toEqual([...fps].sort());
    const changed = await allPages(`client_id=${client}&status=in_progress`);
    expect(changed.map((f) => [f.note, f.status_source, f.status_by])).toEqual(
      Array(3).fill(['sprint 12', 'person', ADMIN_EMAIL]),
    );
  });

  it('a bulk false positive by filter leaves the scores of every session holding those findings', async () => {
    const client = beta.record.client_id;
    const before = (await get(`/api/sessions?client_id=${client}`)).body.sessions[0];
    const res = await http(portal.url, 'POST', '/api/findings/bulk', {
      headers: withToken(await admin()),
      json: {
        filter: { client_id: client, severity: 'critical' },
        change: { disposition: { disposition: 'false_positive', reason: 'decoy host' } },
      },
    });
    expect(res.body).toMatchObject({ matched: 1, changed: 1 });
    const after = (await get(`/api/sessions?client_id=${client}`)).body.sessions[0];
    expect(after.disposition_summary).toEqual({ false_positive: 1 });
    expect(after.risk_score).toBeLessThan(before.risk_score);
    const summary = await get(`/api/findings/summary?client_id=${client}`);
    expect(summary.body).toMatchObject({ total: 4, open: 4, false_positive: 1 });
    // Refusals: nothing or both selections, a blank reason, a past expiry.
    for (const body of [
      { change: { status: 'deferred' } },
      { fingerprints: ['a'.repeat(64)], filter: {}, client_id: client, change: { status: 'deferred' } },
      { filter: { client_id: client }, change: { disposition: { disposition: 'false_positive', reason: ' ' } } },
      { filter: { client_id: client }, change: { exception: { reason: 'r', expiry: '2020-01-01' } } },
    ]) {
      const refused = await http(portal.url, 'POST', '/api/findings/bulk', {
        headers: withToken(await admin()),
        json: body,
      });
      expect(refused.status, JSON.stringify(body)).toBe(400);
    }
    // A key is no identity: 401; a professional client's user has no remediation:update: 403.
    const asKey = await http(portal.url, 'POST', '/api/findings/bulk', {
      headers: withKey(beta.key),
      json: { filter: {}, change: { status: 'deferred' } },
    });
    expect(asKey.status).toBe(401);
  });

  it('due days per client: the defaults, a change that dates every record again, overdue counts', async () => {
    const client = acme.record.client_id;
    const token = await admin();
    const before = await get(`/api/remediation-settings?client_id=${client}`, token);
    expect(before.body).toEqual({
      client_id: client,
      due_days: { critical: 15, high: 30, medium: 90, low: 180, info: null },
      defaults: true,
    });
    const overdueBefore = (await get(`/api/findings/summary?client_id=${client}`, token)).body.overdue;
    const put = await http(portal.url, 'PUT', '/api/remediation-settings', {
      headers: withToken(token),
      json: { client_id: client, due_days: { critical: 365, high: 365, medium: 365, low: 365, info: null } },
    });
    expect(put.status, put.text).toBe(200);
    expect(put.body.defaults).toBe(false);
    expect((await get(`/api/findings/summary?client_id=${client}`, token)).body.overdue).toBe(0);
    expect(overdueBefore).toBeGreaterThan(0);
    const [one] = await allPages(`client_id=${client}&host=10.1.0.4`);
    expect(one?.due_date).toBe('2027-05-01');
    // Scope: another client's settings are not there for a scoped user.
    expect((await get(`/api/remediation-settings?client_id=${beta.record.client_id}`, acmeUser.token)).status).toBe(
      404,
    );
  });

  it("a change of due days waits for a writer of any of the client's targets", async () => {
    const client = acme.record.client_id;
    const token = await admin();
    // An upload of acme-dmz in flight, holding its target as every writer of its records does.
    let release = () => {};
    const released = new Promise<void>((r) => {
      release = r;
    });
    let held = () => {};
    const holding = new Promise<void>((r) => {
      held = r;
    });
    const writer = portal.ctx.db.transaction().execute(async (trx) => {
      await lockTarget(trx, { clientId: client, target: 'acme-dmz' });
      held();
      await released;
    });
    await holding;
    const put = http(portal.url, 'PUT', '/api/remediation-settings', {
      headers: withToken(token),
      json: { client_id: client, due_days: { critical: 365, high: 365, medium: 365, low: 365, info: null } },
    });
    const waiting = async () =>
      (
        await db.query(
          `SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
             AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        )
      ).rowCount === 1;
    try {
      await until(waiting, 20_000, () => 'the change of due days waiting for the target');
    } finally {
      release();
      await writer;
    }
    expect((await put).status).toBe(200);
  });

  it('targets with their latest coverage; purging a target removes its sessions and records', async () => {
    const token = await admin();
    const targets = await get(`/api/targets?client_id=${acme.record.client_id}`, token);
    expect(targets.body.targets.map((t: Doc) => [t.target, t.open, t.coverage?.profile])).toEqual([
      ['acme-dmz', 2, 'quick_recon'],
      ['acme-net', 6, 'quick_recon'],
    ]);
    const denied = await http(portal.url, 'DELETE', `/api/targets?client_id=${acme.record.client_id}&target=acme-dmz`, {
      headers: withToken(acmeUser.token),
    });
    expect(denied.status).toBe(403);
    const purged = await http(portal.url, 'DELETE', `/api/targets?client_id=${acme.record.client_id}&target=acme-dmz`, {
      headers: withToken(token),
    });
    expect(purged.body).toEqual({ success: true, sessions_deleted: 1, records_deleted: 2 });
    expect((await allPages(`client_id=${acme.record.client_id}&target=acme-dmz`)).length).toBe(0);
    const latest = await http(portal.url, 'GET', '/api/sessions/latest-state?target=acme-dmz', {
      headers: withKey(acme.key),
    });
    expect(latest.status).toBe(404);
  });

  it('SVC_RECORD_RETENTION_DAYS removes resolved records unseen that long, never a decision in effect', async () => {
    const client = beta.record.client_id;
    // The next scan of beta-net looks at every host and finds nothing: all four resolved.
    clock.set(new Date('2026-06-02T12:00:00Z'));
    const empty = scan('20260602_120000', 'beta-net', 3, 0);
    empty['coverage']['hosts'] = ['10.3.0.1', '10.3.0.2', '10.3.0.3', '10.3.0.4'];
    await upload(beta.key, empty);
    expect((await get(`/api/findings/summary?client_id=${client}`)).body).toMatchObject({ total: 4, open: 0 });
    clock.advance(400 * DAY_MS);
    expect(await sweepStaleRecords(portal.ctx.db, 0, clock.now())).toBe(0);
    // The false positive (a decision) stays; the three others go.
    expect(await sweepStaleRecords(portal.ctx.db, 365, clock.now())).toBe(3);
    const left = await allPages(`client_id=${client}`);
    expect(left.map((f) => f.disposition?.reason)).toEqual(['decoy host']);
  });
});
