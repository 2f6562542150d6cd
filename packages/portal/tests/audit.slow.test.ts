import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { AUDIT_EVENT_TYPES } from '@svc/protocol';
import { createLicense, createScopedUser, uniqueClientId } from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { ADMIN_EMAIL, LEGACY_KEY, type TestPortal } from '@svc/test-support/portal';
import { usePortalWithDb } from '@svc/test-support/portal-db';

/** GET /api/audit (docs/api.md#operations). */

describe('GET /api/audit', () => {
  let portal: TestPortal;
  let db: pg.Client;
  let admin: string;

  usePortalWithDb(async (p) => {
    ({ portal, db } = p);
    admin = await portal.adminToken();
  });

  const audit = (query = '', token = admin) =>
    http(portal.url, 'GET', `/api/audit${query}`, { headers: withToken(token) });
  const newSession = () => `20260101_${randomBytes(4).toString('hex')}`;

  /** Insert an event directly, `age` before the database's now() (an SQL interval). */
  async function plant(
    opts: {
      age?: string;
      type?: string;
      session?: string | null;
      client?: string | null;
      actor?: string;
      data?: object;
    } = {},
  ): Promise<number> {
    const { rows } = await db.query(
      `INSERT INTO audit_events (event_type, session_id, client_id, actor, data, created_at)
       VALUES ($1, $2, $3, $4, $5, now() - $6::interval) RETURNING id`,
      [
        opts.type ?? 'scan_completed',
        opts.session ?? null,
        opts.client ?? null,
        opts.actor ?? 'planted',
        JSON.stringify(opts.data ?? {}),
        opts.age ?? '0 seconds',
      ],
    );
    return Number(rows[0].id);
  }
  const ids = (res: { body: { events: { id: number }[] } }) => res.body.events.map((e) => e.id);
  const exists = async (id: number) =>
    (await db.query('SELECT 1 FROM audit_events WHERE id = $1', [id])).rowCount === 1;

  describe('the response', () => {
    it('is {events, days, total} with days defaulting to 30 and each event in the documented shape', async () => {
      const session = newSession();
      const id = await plant({
        type: 'status_changed',
        session,
        client: 'acme',
        actor: 'someone@x.test',
        data: { previous_status: 'new', new_status: 'in_review' },
      });
      const res = await audit(`?session=${session}`);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['days', 'events', 'total']);
      expect(res.body.days).toBe(30);
      expect(res.body.total).toBe(1);
      const created = (await db.query('SELECT created_at FROM audit_events WHERE id = $1', [id])).rows[0]
        .created_at as Date;
      expect(res.body.events).toEqual([
        {
          id,
          event_type: 'status_changed',
          session_id: session,
          client_id: 'acme',
          actor: 'someone@x.test',
          data: { previous_status: 'new', new_status: 'in_review' },
          created_at: created.toISOString(),
        },
      ]);
    });

    it('includes events the portal itself records (license_created by the admin)', async () => {
      const clientId = uniqueClientId('audited');
      const { record } = await createLicense(portal, { tier: 'professional', client_id: clientId });
      const res = await audit('?type=license_created&days=1');
      const event = res.body.events.find((e: any) => e.client_id === clientId);
      expect(event).toMatchObject({
        event_type: 'license_created',
        actor: ADMIN_EMAIL,
        session_id: null,
        client_id: clientId,
      });
      expect(event.data).toEqual({
        license_id: record.id,
        key_prefix: record.key_prefix,
        tier: 'professional',
        name: record.name,
        max_sessions: 50,
        max_agents: 5,
        expires_at: null,
      });
    });

    it('lists newest first, ties broken by the newer id', async () => {
      const session = newSession();
      const a = await plant({ session, age: '2 days' });
      const b = await plant({ session, age: '10 minutes' });
      const c = await plant({ session, age: '5 days' });
      const d = await plant({ session, age: '1 hour' });
      // Two events with one timestamp.
      const { rows } = await db.query(
        `WITH t AS (SELECT now() - interval '3 days' AS at)
         INSERT INTO audit_events (event_type, session_id, actor, data, created_at)
         SELECT 'scan_completed', $1, 'planted', '{}', at FROM t, generate_series(1, 2) RETURNING id`,
        [session],
      );
      const [e, f] = rows.map((r) => Number(r.id)).sort((x, y) => x - y) as [number, number];
      const res = await audit(`?session=${session}`);
      expect(ids(res)).toEqual([b, d, a, f, e, c]);
      expect(res.body.total).toBe(6);
      const times = res.body.events.map((ev: any) => Date.parse(ev.created_at));
      expect([...times].sort((x, y) => y - x)).toEqual(times);
    });

    it('limit caps the events returned, total still counts every match', async () => {
      const session = newSession();
      const planted = [];
      for (let i = 5; i >= 1; i--) planted.push(await plant({ session, age: `${i} minutes` }));
      const res = await audit(`?session=${session}&limit=2`);
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual([planted[4], planted[3]]);
      expect(res.body.total).toBe(5);
    });
  });

  describe('the days window', () => {
    it('events between 30 and 90 days old show only with a larger days', async () => {
      const session = newSession();
      const recent = await plant({ session, age: '29 days' });
      const mid = await plant({ session, age: '45 days' });
      const old = await plant({ session, age: '89 days' });
      const one = await plant({ session, age: '12 hours' });

      const expectations: [string, number[], number][] = [
        ['', [one, recent], 30],
        ['&days=1', [one], 1],
        ['&days=28', [one], 28],
        ['&days=44', [one, recent], 44],
        ['&days=46', [one, recent, mid], 46],
        ['&days=60', [one, recent, mid], 60],
        ['&days=90', [one, recent, mid, old], 90],
      ];
      for (const [q, expected, days] of expectations) {
        const res = await audit(`?session=${session}${q}`);
        expect(res.status, q).toBe(200);
        expect(ids(res), q).toEqual(expected);
        expect(res.body.total, q).toBe(expected.length);
        expect(res.body.days, q).toBe(days);
      }
    });

    const bad: [string, string][] = [
      ['days=0', 'Invalid query: days must be >= 1'],
      ['days=-1', 'Invalid query: days must be >= 1'],
      ['days=91', 'Invalid query: days must be <= 90'],
      ['days=365', 'Invalid query: days must be <= 90'],
      ['days=abc', 'Invalid query: days must be integer'],
      ['days=1.5', 'Invalid query: days must be integer'],
      ['days=30&days=31', 'Invalid query: days must be integer'],
      ['type=bogus', 'Invalid query: type must be equal to constant'],
      ['type=LICENSE_CREATED', 'Invalid query: type must be equal to constant'],
      ['session=a%2Fb', 'Invalid query: session must match pattern "^[a-zA-Z0-9_-]+$"'],
      ['session=..', 'Invalid query: session must match pattern "^[a-zA-Z0-9_-]+$"'],
      ['limit=0', 'Invalid query: limit must be >= 1'],
      ['client_id=acme', 'Invalid query: querystring must NOT have additional properties (client_id)'],
      ['actor=x', 'Invalid query: querystring must NOT have additional properties (actor)'],
    ];
    for (const [q, error] of bad) {
      it(`?${q}: 400`, async () => {
        const res = await audit(`?${q}`);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error });
      });
    }
  });

  describe('filters', () => {
    it('type: only events of that type; every audit event type is accepted', async () => {
      const session = newSession();
      const scan = await plant({ session, type: 'scan_completed' });
      const status = await plant({ session, type: 'status_changed' });
      const cmd = await plant({ session, type: 'command_completed' });
      expect(ids(await audit(`?session=${session}&type=status_changed`))).toEqual([status]);
      expect(ids(await audit(`?session=${session}&type=command_completed`))).toEqual([cmd]);
      expect(ids(await audit(`?session=${session}&type=scan_completed`))).toEqual([scan]);
      expect(ids(await audit(`?session=${session}&type=agent_purged`))).toEqual([]);
      for (const type of AUDIT_EVENT_TYPES) {
        const res = await audit(`?type=${type}&days=1`);
        expect(res.status, type).toBe(200);
        for (const e of res.body.events) expect(e.event_type).toBe(type);
      }
    });

    it("session: only that session's events", async () => {
      const s1 = newSession();
      const s2 = newSession();
      const a = await plant({ session: s1 });
      const b = await plant({ session: s2 });
      await plant({ session: null });
      expect(ids(await audit(`?session=${s1}`))).toEqual([a]);
      expect(ids(await audit(`?session=${s2}`))).toEqual([b]);
      expect(ids(await audit(`?session=${newSession()}`))).toEqual([]);
      expect((await audit(`?session=${newSession()}`)).body).toEqual({ events: [], days: 30, total: 0 });
    });
  });

  describe('pruning', () => {
    it('every request deletes events older than 90 days from the table', async () => {
      const session = newSession();
      const ancient = await plant({ session, age: '400 days' });
      const old = await plant({ session, age: '91 days' });
      const justOver = await plant({ session, age: '90 days 1 hour' });
      const kept = await plant({ session, age: '89 days 23 hours' });
      const fresh = await plant({ session, age: '1 minute' });
      const other = await plant({ session: null, client: 'someone-else', age: '100 days' });

      // Any successful request prunes, even one that filters on something else.
      const res = await audit('?days=1&type=agent_first_seen');
      expect(res.status).toBe(200);
      for (const id of [ancient, old, justOver, other]) expect(await exists(id), `event ${id}`).toBe(false);
      for (const id of [kept, fresh]) expect(await exists(id), `event ${id}`).toBe(true);
      expect(ids(await audit(`?session=${session}&days=90`))).toEqual([fresh, kept]);
    });

    it("a scoped member's request prunes too (the whole table, not only its clients)", async () => {
      const clientId = uniqueClientId('pruner');
      await createLicense(portal, { tier: 'msp', client_id: clientId });
      const member = await createScopedUser(portal, [clientId]);
      const foreign = await plant({ client: 'not-the-members', age: '120 days' });
      const own = await plant({ client: clientId, age: '120 days' });
      const res = await audit('', member.token);
      expect(res.status).toBe(200);
      expect(await exists(foreign)).toBe(false);
      expect(await exists(own)).toBe(false);
    });
  });

  describe('access', () => {
    it('needs an admin JWT in X-Identity-Token: no token, a bad one or a license key get 401', async () => {
      const { key } = await createLicense(portal, { tier: 'msp' });
      for (const headers of [{}, withToken('nope'), withKey(key), withKey(LEGACY_KEY)]) {
        const res = await http(portal.url, 'GET', '/api/audit', { headers });
        expect(res.status).toBe(401);
        expect(res.text).toBe('{"error":"Unauthorized"}');
      }
    });

    it('authentication comes before query validation', async () => {
      const res = await http(portal.url, 'GET', '/api/audit?days=0&client_id=x');
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'Unauthorized' });
    });
  });
});
