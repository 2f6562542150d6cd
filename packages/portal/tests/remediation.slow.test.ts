import type pg from 'pg';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RemediationSummary } from '@svc/protocol';
import { findingFingerprint } from '@svc/protocol/node';
import type { AppContext } from '../src/context.ts';
import { DomainError } from '../src/domain/errors.ts';
import { httpErrorOf } from '../src/http/errors.ts';
import { REMEDIATION_CONFLICT_MESSAGE, updateRemediation } from '../src/sessions/remediation-update.ts';
import { resolveUser } from '../src/auth/users.ts';
import {
  createLicense,
  createScopedUser,
  FakeClock,
  uniqueClientId,
  type LicenseFixture,
} from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { ADMIN_EMAIL, LEGACY_KEY, type TestPortal } from '@svc/test-support/portal';
import { usePortalWithDb } from '@svc/test-support/portal-db';

/**
 * PATCH /api/remediation-update (docs/api.md#sessions, "Remediation status changes") on the
 * findings of record (docs/findings-of-record.md): the served session_results.json reflects the
 * updates (resolved moves an entry to .remediation_resolved[], any other status back), the
 * stored file stays the evidence as uploaded, concurrent updates of one target wait for each
 * other and none is lost. Real portal, real PostgreSQL, real blob store.
 */

type Entry = Record<string, unknown>;
const HOST = '10.0.0.1';
const PORTS: Record<string, number> = { A: 21, B: 22, C: 23, R: 25 };
const fp = (title: string) =>
  findingFingerprint({ rule_id: `rule-${title}`, host: HOST, port: PORTS[title] ?? 1000, protocol: 'tcp' });

/** A session of its own target whose findings are `items` (title, severity), each with the scanner's entry. */
function sessionDoc(sessionId: string, clientId: string, items: [string, string, Entry?][]): Entry {
  return {
    metadata: {
      session_id: sessionId,
      client_id: clientId,
      client: 'Acme',
      target: `10.0.0.0/24 #${sessionId}`,
      tool_version: '4.2.3',
    },
    findings: items.map(([title, severity], i) => ({
      id: `f-${i}`,
      rule_id: `rule-${title}`,
      title,
      severity,
      host: HOST,
      port: PORTS[title] ?? 1000 + i,
      protocol: 'tcp',
    })),
    remediation: items.map(([title, severity, extra], i) => ({
      title,
      severity,
      finding_id: `f-${i}`,
      host: HOST,
      status: 'new',
      note: '',
      first_seen: sessionId,
      exception_status: null,
      ...extra,
    })),
    remediation_resolved: [],
  };
}

let counter = 0;
const newSessionId = () => `20250304_${String(100000 + counter++).slice(-6)}_${Math.random().toString(36).slice(2, 8)}`;

const summary = (
  by_status: Partial<RemediationSummary['by_status']>,
  by_severity: Partial<RemediationSummary['by_severity']>,
): RemediationSummary => {
  const s = { new: 0, persistent: 0, in_progress: 0, resolved: 0, deferred: 0, ...by_status };
  return {
    total: Object.values(s).reduce((a, b) => a + b, 0),
    resolved_count: s.resolved,
    by_status: s,
    by_severity: { critical: 0, high: 0, medium: 0, low: 0, info: 0, ...by_severity },
  };
};

describe('PATCH /api/remediation-update', () => {
  const clock = new FakeClock();
  let portal: TestPortal;
  let admin: string;
  let db: pg.Client;
  let acme: LicenseFixture;

  async function upload(key: string, doc: Entry): Promise<string> {
    const form = new FormData();
    form.append('session_json', new Blob([JSON.stringify(doc)], { type: 'application/json' }), 'session_results.json');
    const res = await fetch(`${portal.url}/api/upload`, { method: 'POST', headers: withKey(key), body: form });
    const body = (await res.json()) as { session_id?: string; error?: string };
    if (res.status !== 200 || !body.session_id) throw new Error(`upload: ${res.status} ${JSON.stringify(body)}`);
    return body.session_id;
  }

  const patch = (token: string | null, body: unknown, headers: Record<string, string> = {}) =>
    http(portal.url, 'PATCH', '/api/remediation-update', {
      headers: { ...(token === null ? {} : withToken(token)), ...headers },
      json: body,
    });

  /** The stored row: the upload's evidence, which no remediation update rewrites. */
  async function row(sessionId: string) {
    const r = await db.query('SELECT version, files, metadata, updated_at FROM sessions WHERE session_id = $1', [
      sessionId,
    ]);
    return r.rows[0] as { version: number; files: Record<string, { key: string }>; metadata: any; updated_at: Date };
  }

  /** The session file through GET /api/download: the evidence with its current triage. */
  async function served(sessionId: string): Promise<any> {
    const res = await http(portal.url, 'GET', `/api/download?session=${sessionId}`, { headers: withToken(admin) });
    expect(res.status, res.text).toBe(200);
    return JSON.parse(res.text);
  }

  async function listed(sessionId: string) {
    const res = await http(portal.url, 'GET', `/api/sessions?session=${sessionId}`, { headers: withToken(admin) });
    expect(res.status, res.text).toBe(200);
    return res.body.session;
  }

  async function auditEvents(sessionId: string) {
    return (
      await db.query(
        "SELECT actor, client_id, session_id, data FROM audit_events WHERE session_id = $1 AND event_type = 'remediation_updated' ORDER BY id",
        [sessionId],
      )
    ).rows;
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

  const fourItems = (sessionId: string) =>
    sessionDoc(sessionId, acme.record.client_id, [
      ['A', 'critical'],
      ['B', 'high', { status: 'persistent', first_seen: '20250101_000000' }],
      ['C', 'low', { status: 'in_progress' }],
      ['R', 'medium'],
    ]);
  const titles = (entries: Entry[]) => entries.map((e) => [e['title'], e['status']]);

  it('moves items between the arrays both ways, in one request, with the summary and one audit event', async () => {
    const sessionId = await upload(acme.key, fourItems(newSessionId()));
    const before = await row(sessionId);
    const resolveR = await patch(admin, { session_id: sessionId, items: [{ title: 'R', status: 'resolved' }] });
    expect(resolveR.status, resolveR.text).toBe(200);

    clock.advance(5_000);
    const T = clock.now().toISOString();
    const items = [
      { title: 'A', status: 'resolved' },
      { title: 'R', status: 'in_progress' },
      { title: 'B', status: 'deferred' },
      { title: 'C', status: 'in_progress' },
      { title: 'no such item', status: 'new' },
    ];
    const res = await patch(admin, { session_id: sessionId, items });
    expect(res.status, res.text).toBe(200);
    const expected = summary({ in_progress: 2, deferred: 1, resolved: 1 }, { critical: 1, high: 1, low: 1, medium: 1 });
    expect(res.body).toEqual({
      success: true,
      session_id: sessionId,
      changed: 3,
      remediation_summary: expected,
      unmatched: ['no such item'],
      results: items.map(({ title }) => ({ title, matched: title === 'no such item' ? 0 : 1 })),
    });

    const doc = await served(sessionId);
    expect(titles(doc.remediation)).toEqual([
      ['B', 'deferred'],
      ['C', 'in_progress'],
      ['R', 'in_progress'],
    ]);
    expect(titles(doc.remediation_resolved)).toEqual([['A', 'resolved']]);
    expect(doc.remediation_resolved[0]).toMatchObject({
      fingerprint: fp('A'),
      status_changed: T,
      status_source: 'person',
    });
    expect(doc.metadata.remediation_summary).toEqual(expected);
    expect((await listed(sessionId)).remediation_summary).toEqual(expected);
    // The stored file is the scan's evidence: never rewritten by an update.
    expect(await row(sessionId)).toEqual(before);

    const events = await auditEvents(sessionId);
    expect(events.at(-1)).toEqual({
      actor: ADMIN_EMAIL,
      client_id: acme.record.client_id,
      session_id: sessionId,
      data: {
        session_id: sessionId,
        target: `10.0.0.0/24 #${sessionId}`,
        changed: 3,
        items: items.map((i) => ({ ...i, matched: i.title === 'no such item' ? 0 : 1 })),
        remediation_summary: expected,
      },
    });

    // Back again: resolved → open and open → resolved, in one request.
    clock.advance(5_000);
    const back = await patch(admin, {
      session_id: sessionId,
      items: [
        { title: 'A', status: 'new' },
        { title: 'R', status: 'resolved' },
      ],
    });
    expect(back.status, back.text).toBe(200);
    const expected2 = summary(
      { new: 1, in_progress: 1, deferred: 1, resolved: 1 },
      { critical: 1, high: 1, low: 1, medium: 1 },
    );
    expect(back.body.remediation_summary).toEqual(expected2);
    expect(back.body.changed).toBe(2);
    const doc2 = await served(sessionId);
    expect(titles(doc2.remediation)).toEqual([
      ['A', 'new'],
      ['B', 'deferred'],
      ['C', 'in_progress'],
    ]);
    expect(titles(doc2.remediation_resolved)).toEqual([['R', 'resolved']]);
    expect((await auditEvents(sessionId)).map((e) => e.data.changed)).toEqual([1, 3, 2]);
  });

  it('the same statuses again change nothing: no audit event', async () => {
    const sessionId = await upload(acme.key, fourItems(newSessionId()));
    const before = await served(sessionId);
    const res = await patch(admin, {
      session_id: sessionId,
      items: [
        { title: 'A', status: 'new' },
        { title: 'B', status: 'persistent' },
        { title: 'C', status: 'in_progress' },
        { title: 'ghost', status: 'resolved' },
      ],
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      success: true,
      session_id: sessionId,
      changed: 0,
      remediation_summary: before.metadata.remediation_summary,
      unmatched: ['ghost'],
      results: [
        { title: 'A', matched: 1 },
        { title: 'B', matched: 1 },
        { title: 'C', matched: 1 },
        { title: 'ghost', matched: 0 },
      ],
    });
    expect(await served(sessionId)).toEqual(before);
    expect(await auditEvents(sessionId)).toEqual([]);
  });

  it('a note is stored on the finding and does not count as a status change', async () => {
    const sessionId = await upload(acme.key, fourItems(newSessionId()));
    const res = await patch(admin, {
      session_id: sessionId,
      items: [{ title: 'C', status: 'in_progress', note: 'vendor patch due Friday' }],
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.changed).toBe(0);
    const doc = await served(sessionId);
    expect(doc.remediation[2]).toMatchObject({ title: 'C', status: 'in_progress', note: 'vendor patch due Friday' });
    expect(await auditEvents(sessionId)).toHaveLength(1);
  });

  describe('validation', () => {
    let sessionId: string;
    beforeAll(async () => {
      sessionId = await upload(acme.key, fourItems(newSessionId()));
    });

    it.each([
      [
        'fixed',
        'Invalid status "fixed" for items[1] ("B"): must be one of new, persistent, in_progress, resolved, deferred',
      ],
      [
        'Resolved',
        'Invalid status "Resolved" for items[1] ("B"): must be one of new, persistent, in_progress, resolved, deferred',
      ],
      ['', 'Invalid status "" for items[1] ("B"): must be one of new, persistent, in_progress, resolved, deferred'],
    ])('status %j is a 400 naming it, and nothing is applied', async (status, message) => {
      const before = await served(sessionId);
      const res = await patch(admin, {
        session_id: sessionId,
        items: [
          { title: 'A', status: 'resolved' },
          { title: 'B', status },
        ],
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: message });
      expect(await served(sessionId)).toEqual(before);
    });

    it('a status of the wrong type is a 400', async () => {
      const res = await patch(admin, { session_id: sessionId, items: [{ title: 'A', status: 3 }] });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/status/);
    });

    it('a missing or malformed session_id is a 400', async () => {
      const missing = await patch(admin, { items: [{ title: 'A', status: 'new' }] });
      expect(missing.status).toBe(400);
      expect(missing.body.error).toMatch(/session_id/);
      for (const bad of ['', '../etc', 'a/b', 'a b', 'x'.repeat(129), 'a%2e']) {
        const res = await patch(admin, { session_id: bad, items: [{ title: 'A', status: 'new' }] });
        expect(res.status, bad).toBe(400);
        expect(res.body.error, bad).toMatch(/session_id/);
      }
    });

    it('an unknown session is a 404', async () => {
      const res = await patch(admin, { session_id: '20990101_000000', items: [{ title: 'A', status: 'new' }] });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Session not found' });
    });

    it('items must be an array of 1 to 1000 {title, status} with a non-empty title', async () => {
      const bodies: unknown[] = [
        { session_id: sessionId },
        { session_id: sessionId, items: [] },
        { session_id: sessionId, items: {} },
        { session_id: sessionId, items: [{ title: '', status: 'new' }] },
        { session_id: sessionId, items: [{ status: 'new' }] },
        { session_id: sessionId, items: [{ title: 'A' }] },
        { session_id: sessionId, items: [{ title: 'A', status: 'new', extra: 1 }] },
        { session_id: sessionId, items: Array.from({ length: 1001 }, (_, i) => ({ title: `t${i}`, status: 'new' })) },
        { session_id: sessionId, items: [{ title: 'A', status: 'new' }], client: 'other' },
        { session_id: sessionId, items: [{ title: 'A', status: 'new' }], client_id: '../x' },
      ];
      for (const body of bodies) {
        const res = await patch(admin, body);
        expect(res.status, JSON.stringify(body).slice(0, 120)).toBe(400);
        expect(typeof res.body.error).toBe('string');
      }
      const thousand = await patch(admin, {
        session_id: sessionId,
        items: Array.from({ length: 1000 }, (_, i) => ({ title: `t${i}`, status: 'new' })),
      });
      expect(thousand.status).toBe(200);
      expect(thousand.body.unmatched).toHaveLength(1000);
    });
  });

  describe('credentials and scope', () => {
    let sessionId: string;
    const body = () => ({ session_id: sessionId, items: [{ title: 'A', status: 'in_progress' }] });
    beforeAll(async () => {
      sessionId = await upload(acme.key, fourItems(newSessionId()));
    });

    it('refuses requests without an identity JWT, keys included, with 401', async () => {
      const before = await served(sessionId);
      const attempts: Record<string, string>[] = [
        {},
        withKey(acme.key),
        withKey(LEGACY_KEY),
        { 'x-identity-token': 'not-a-jwt' },
        { authorization: `Bearer ${admin}` },
      ];
      for (const headers of attempts) {
        const res = await patch(null, body(), headers);
        expect(res.status, JSON.stringify(Object.keys(headers))).toBe(401);
        expect(res.body).toEqual({ error: 'Unauthorized' });
      }
      expect(await served(sessionId)).toEqual(before);
    });

    it('a scoped user of another client gets the same 404 as for a missing session', async () => {
      const other = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('other') });
      const user = await createScopedUser(portal, [other.record.client_id]);
      const before = await served(sessionId);
      const res = await patch(user.token, body());
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Session not found' });
      expect(await served(sessionId)).toEqual(before);
    });

    it('a scoped user whose clients only have a professional key gets 403 naming the permission', async () => {
      const pro = await createLicense(portal, { tier: 'professional', client_id: uniqueClientId('pro') });
      const proSession = await upload(pro.key, sessionDoc(newSessionId(), pro.record.client_id, [['A', 'high']]));
      const user = await createScopedUser(portal, [pro.record.client_id]);
      const res = await patch(user.token, { session_id: proSession, items: [{ title: 'A', status: 'resolved' }] });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'Insufficient permissions for remediation:update' });
      // The same user with a business key for its client may.
      await createLicense(portal, { tier: 'business', client_id: pro.record.client_id });
      const ok = await patch(user.token, { session_id: proSession, items: [{ title: 'A', status: 'resolved' }] });
      expect(ok.status, ok.text).toBe(200);
      expect(ok.body.changed).toBe(1);
    });

    it('an in-scope business user may; the audit actor is that user', async () => {
      const user = await createScopedUser(portal, [acme.record.client_id]);
      const res = await patch(user.token, body());
      expect(res.status, res.text).toBe(200);
      expect(res.body.changed).toBe(1);
      const events = await auditEvents(sessionId);
      expect(events.map((e) => [e.actor, e.client_id])).toEqual([[user.email, acme.record.client_id]]);
    });
  });

  describe('concurrent updates', () => {
    const STATUSES = ['persistent', 'in_progress', 'resolved', 'deferred'] as const;
    const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;
    const title = (i: number) => `item-${String(i).padStart(2, '0')}`;

    it('50 concurrent updates of one target all apply, one after the other: none is lost', async () => {
      const N = 50;
      const sessionId = await upload(
        acme.key,
        sessionDoc(
          newSessionId(),
          acme.record.client_id,
          Array.from({ length: N }, (_, i): [string, string] => [title(i), SEVERITIES[i % 5]!]),
        ),
      );
      const target = (i: number) => STATUSES[i % STATUSES.length]!;
      const answers = await Promise.all(
        Array.from({ length: N }, (_, i) =>
          patch(admin, { session_id: sessionId, items: [{ title: title(i), status: target(i) }] }),
        ),
      );
      for (const [i, res] of answers.entries()) {
        expect(res.status, `${i}: ${res.text}`).toBe(200);
        expect(res.body.changed).toBe(1);
      }
      const doc = await served(sessionId);
      for (let i = 0; i < N; i++) {
        const where = target(i) === 'resolved' ? doc.remediation_resolved : doc.remediation;
        expect(
          where.filter((e: Entry) => e['title'] === title(i)).map((e: Entry) => e['status']),
          title(i),
        ).toEqual([target(i)]);
      }
      // Serialised: the k-th commit saw exactly the k-1 before it.
      const open = (s: RemediationSummary) => N - s.by_status.new;
      expect(answers.map((a) => open(a.body.remediation_summary)).sort((a, b) => a - b)).toEqual(
        answers.map((_, k) => k + 1),
      );
      const events = await auditEvents(sessionId);
      expect(events.map((e) => open(e.data.remediation_summary))).toEqual(answers.map((_, k) => k + 1));
      expect(doc.metadata.remediation_summary).toEqual(events.at(-1)!.data.remediation_summary);
    });

    /** A context whose database fails the first `conflicts` transactions as a serialisation failure would. */
    function conflictingContext(conflicts: number): { ctx: AppContext; attempts: () => number } {
      const ctx = portal.ctx;
      let n = 0;
      const db = new Proxy(ctx.db, {
        get(target, prop) {
          const receiver = target;
          if (prop !== 'transaction') {
            const value = Reflect.get(target, prop, receiver);
            return typeof value === 'function' ? value.bind(target) : value;
          }
          return () => {
            const real = target.transaction();
            return {
              execute: (fn: Parameters<typeof real.execute>[0]) => {
                if (n++ < conflicts)
                  return Promise.reject(Object.assign(new Error('could not serialize access'), { code: '40001' }));
                return real.execute(fn);
              },
            };
          };
        },
      });
      return { ctx: { ...ctx, db }, attempts: () => n };
    }

    it('gives up with 409 after 3 retries (4 attempts) of a database conflict, changing nothing', async () => {
      const sessionId = await upload(acme.key, fourItems(newSessionId()));
      const user = (await resolveUser(portal.ctx, admin))!;
      const before = await served(sessionId);
      const { ctx, attempts } = conflictingContext(Infinity);
      const err = await updateRemediation(ctx, user, { sessionId, clientId: undefined }, [
        { title: 'A', status: 'resolved' },
      ]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DomainError);
      expect(httpErrorOf(err as DomainError).statusCode).toBe(409);
      expect((err as DomainError).message).toBe(REMEDIATION_CONFLICT_MESSAGE);
      expect(attempts()).toBe(4);
      expect(await served(sessionId)).toEqual(before);
      expect(await auditEvents(sessionId)).toEqual([]);
    });

    it('succeeds on the last retry after three conflicts', async () => {
      const sessionId = await upload(acme.key, fourItems(newSessionId()));
      const user = (await resolveUser(portal.ctx, admin))!;
      const { ctx, attempts } = conflictingContext(3);
      const outcome = await updateRemediation(ctx, user, { sessionId, clientId: undefined }, [
        { title: 'A', status: 'resolved' },
      ]);
      expect(outcome.changed).toBe(1);
      expect(attempts()).toBe(4);
      expect((await served(sessionId)).remediation_resolved.map((e: Entry) => e['title'])).toEqual(['A']);
      expect(await auditEvents(sessionId)).toHaveLength(1);
    });
  });
});
