import fs from 'node:fs/promises';
import type pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DomainEvent } from '../src/events/bus.ts';
import { sweepExpiredSessions } from '../src/sessions/retention.ts';
import {
  createLicense,
  createScopedUser,
  DAY_MS,
  FakeClock,
  openDb,
  uniqueClientId,
  type LicenseFixture,
  type ScopedUser,
} from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { ADMIN_EMAIL, ADMIN_PASSWORD, login, type TestPortal } from '@svc/test-support/portal';
import { usePortalWithDb } from '@svc/test-support/portal-db';
import { blobPath, newSessionId, postUpload, sessionDoc, sessionParts, type Doc } from '@svc/test-support/upload';

/**
 * /api/sessions (docs/api.md#sessions; events status_changed, session_deleted,
 * report_expiring): listing, detail, review status, delete and retention, against the
 * real portal on a real database, with a clock the tests move by hand.
 */

const LOG = 'pipeline log\n';
const REPORT = '<html><body>report</body></html>';

type FileRef = { key: string };

/** Collects the events published on the portal's bus while a test runs. */
function collectEvents(portal: TestPortal) {
  const events: DomainEvent[] = [];
  const unsubscribe = portal.ctx.events.subscribe((e) => void events.push(e));
  return {
    events,
    of: (type: string, sessionId?: string) =>
      events.filter((e) => e.event_type === type && (sessionId === undefined || e.session_id === sessionId)),
    async stop() {
      await portal.ctx.events.drain();
      unsubscribe();
    },
  };
}

describe('/api/sessions', () => {
  // Tokens are checked against the wall clock, so the fake clock starts at the real time.
  const clock = new FakeClock(new Date(Math.floor(Date.now() / 1000) * 1000));
  let portal: TestPortal;
  let admin: string;
  let db: pg.Client;

  usePortalWithDb(
    async (p) => {
      ({ portal, db } = p);
      admin = await portal.adminToken();
    },
    { now: clock.now },
  );

  /** Upload a session with `key`, one second after the previous one (unless `sameInstant`). */
  const upload = async (
    key: string,
    opts: { id?: string; target?: string; doc?: Doc; files?: boolean; sameInstant?: boolean } = {},
  ) => {
    if (!opts.sameInstant) clock.advance(1000);
    const id = opts.id ?? newSessionId();
    const doc = opts.doc ?? sessionDoc('session-complete.json', id);
    if (opts.target !== undefined) doc['metadata']['target'] = opts.target;
    const res = await postUpload(
      portal.url,
      key,
      sessionParts(doc, opts.files === false ? {} : { log: LOG, report: REPORT }),
    );
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.text}`);
    return id;
  };
  const get = (query: string, token = admin) =>
    http(portal.url, 'GET', `/api/sessions${query}`, { headers: withToken(token) });
  const patch = (id: string, body: unknown, headers: Record<string, string> = withToken(admin)) =>
    http(portal.url, 'PATCH', `/api/sessions?session=${encodeURIComponent(id)}`, { headers, json: body });
  const del = (id: string, headers: Record<string, string> = withToken(admin)) =>
    http(portal.url, 'DELETE', `/api/sessions?session=${encodeURIComponent(id)}`, { headers });
  const ids = (res: { body: { sessions: { session_id: string }[] } }) => res.body.sessions.map((s) => s.session_id);
  const filesOf = async (id: string) =>
    ((await db.query('SELECT files FROM sessions WHERE session_id = $1', [id])).rows[0]?.files ?? null) as Record<
      string,
      FileRef
    > | null;
  const exists = (key: string) =>
    fs.stat(blobPath(portal.dataDir, key)).then(
      () => true,
      () => false,
    );

  describe('listing', () => {
    let a: LicenseFixture;
    let b: LicenseFixture;
    let c: LicenseFixture;
    const byClient: Record<string, string[]> = {};
    let member: ScopedUser;

    beforeAll(async () => {
      a = await createLicense(portal, { client_id: uniqueClientId('a') });
      b = await createLicense(portal, { client_id: uniqueClientId('b') });
      c = await createLicense(portal, { client_id: uniqueClientId('c') });
      for (const [lic, targets] of [
        [a, ['alpha.example', 'beta.example']],
        [b, ['alpha.example']],
        [c, ['gamma.example', 'alpha.example']],
      ] as const) {
        byClient[lic.record.client_id] = [];
        for (const target of targets) byClient[lic.record.client_id]!.push(await upload(lic.key, { target }));
      }
      member = await createScopedUser(portal, [a.record.client_id, b.record.client_id]);
    });

    /** Every session the caller can see, page by page. */
    const all = async (query: string, token = admin) => {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res = await get(`?limit=200${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, token);
        expect(res.status, res.text).toBe(200);
        seen.push(...ids(res));
        cursor = res.body.next_cursor;
      } while (cursor !== null);
      return seen;
    };

    it('an admin sees every client', async () => {
      const seen = await all('');
      for (const list of Object.values(byClient)) expect(seen).toEqual(expect.arrayContaining(list));
      const res = await get(`?client_id=${c.record.client_id}`);
      expect(ids(res).sort()).toStrictEqual([...byClient[c.record.client_id]!].sort());
    });

    it('a scoped member sees only its clients', async () => {
      const seen = await all('', member.token);
      expect(seen.sort()).toStrictEqual([...byClient[a.record.client_id]!, ...byClient[b.record.client_id]!].sort());
      const res = await get(`?client_id=${b.record.client_id}`, member.token);
      expect(res.status).toBe(200);
      expect(ids(res)).toStrictEqual(byClient[b.record.client_id]);
      for (const s of res.body.sessions) expect(s.client_id).toBe(b.record.client_id);
    });

    it('a client_id filter outside the scope is 403', async () => {
      const res = await get(`?client_id=${c.record.client_id}`, member.token);
      expect(res.status).toBe(403);
      expect(typeof res.body.error).toBe('string');
      expect((await get(`?client_id=${uniqueClientId('nobody')}`, member.token)).status).toBe(403);
    });

    it('needs a JWT: a key or nothing is refused', async () => {
      expect((await http(portal.url, 'GET', '/api/sessions', {})).status).toBe(401);
      const res = await http(portal.url, 'GET', '/api/sessions', { headers: withKey(a.key) });
      expect([401, 403]).toContain(res.status);
    });

    it('filters by status and by target', async () => {
      const [first, second] = byClient[a.record.client_id]!;
      expect((await patch(first!, { status: 'resolved' })).status).toBe(200);
      const resolved = await get(`?client_id=${a.record.client_id}&status=resolved`);
      expect(ids(resolved)).toStrictEqual([first]);
      expect(resolved.body.sessions[0].status).toBe('resolved');
      expect(ids(await get(`?client_id=${a.record.client_id}&status=new`))).toStrictEqual([second]);
      expect(ids(await get(`?client_id=${a.record.client_id}&status=archived`))).toStrictEqual([]);

      const alpha = await all('&target=alpha.example', member.token);
      expect(alpha.sort()).toStrictEqual([byClient[a.record.client_id]![0], byClient[b.record.client_id]![0]].sort());
      const alphaAll = await all('&target=alpha.example');
      expect(alphaAll).toEqual(expect.arrayContaining([byClient[c.record.client_id]![1]]));
      expect(ids(await get(`?target=gamma.example&client_id=${c.record.client_id}`))).toStrictEqual([
        byClient[c.record.client_id]![0],
      ]);
      expect((await get('?status=closed')).status).toBe(400);
      // A target no session can have (PostgreSQL text holds no NUL): the edge rule's 400, not a 500.
      const nul = await get('?target=a%00b');
      expect(nul.status, nul.text).toBe(400);
      expect(nul.body).toEqual({ error: 'Invalid query: field contains a NUL character (at target)' });
    });

    it('cursor pagination through 7 sessions with limit 3: every session once, newest first', async () => {
      const lic = await createLicense(portal, { client_id: uniqueClientId('pages') });
      const uploaded: { id: string; at: number }[] = [];
      for (let i = 0; i < 7; i++) {
        // Sessions 3 and 4, and 5 and 6, share an upload instant: the session id breaks the tie.
        const sameInstant = i === 3 || i === 5;
        const id = await upload(lic.key, { sameInstant, files: false });
        uploaded.push({ id, at: clock.now().getTime() });
      }
      const expected = [...uploaded].sort((x, y) => y.at - x.at || (x.id < y.id ? 1 : -1)).map((u) => u.id);

      const pages: string[][] = [];
      let cursor: string | null = null;
      do {
        const res = await get(
          `?client_id=${lic.record.client_id}&limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        );
        expect(res.status, res.text).toBe(200);
        pages.push(ids(res));
        cursor = res.body.next_cursor;
        expect(pages.length).toBeLessThanOrEqual(3);
      } while (cursor !== null);
      expect(pages.map((p) => p.length)).toStrictEqual([3, 3, 1]);
      expect(pages.flat()).toStrictEqual(expected);
      expect(new Set(pages.flat()).size).toBe(7);

      // Uploads of other clients in between do not disturb a walk that is under way.
      const first = await get(`?client_id=${lic.record.client_id}&limit=3`);
      await upload(lic.key, { files: false });
      const next = await get(
        `?client_id=${lic.record.client_id}&limit=3&cursor=${encodeURIComponent(first.body.next_cursor)}`,
      );
      expect(ids(next)).toStrictEqual(expected.slice(3, 6));

      // Exactly a page: no next cursor after the last one.
      const exact = await get(`?client_id=${lic.record.client_id}&limit=8`);
      expect(exact.body.sessions).toHaveLength(8);
      expect(exact.body.next_cursor).toBeNull();
    });

    it('an invalid cursor or limit is 400', async () => {
      for (const cursor of [
        'garbage',
        Buffer.from('["not a date","x"]').toString('base64url'),
        Buffer.from('{"a":1}').toString('base64url'),
        Buffer.from('[1]').toString('base64url'),
      ]) {
        const res = await get(`?cursor=${encodeURIComponent(cursor)}`);
        expect(res.status, cursor).toBe(400);
        expect(typeof res.body.error).toBe('string');
      }
      // Well-formed JSON, but values PostgreSQL would choke on: still a 400, never a 500.
      for (const cursor of [
        JSON.stringify(['2025-01-01T00:00:00.000Z', 'a\u0000b']),
        JSON.stringify(['-200000-01-01T00:00:00.000Z', 'x']),
        JSON.stringify(['+200000-01-01T00:00:00.000Z', 'x']),
        JSON.stringify(['2025-01-01T00:00:00.000Z', '../x']),
      ]) {
        const res = await get(`?cursor=${Buffer.from(cursor).toString('base64url')}`);
        expect(res.status, cursor).toBe(400);
      }
      expect((await get('?limit=0')).status).toBe(400);
      expect((await get('?limit=201')).status).toBe(400);
      expect((await get('?limit=abc')).status).toBe(400);
      expect((await get('?unknown=1')).status).toBe(400);
    });
  });

  describe('detail', () => {
    it('one session with its status history and notes', async () => {
      const lic = await createLicense(portal);
      const id = await upload(lic.key);
      expect((await patch(id, { status: 'in_review', note: 'started' })).status).toBe(200);
      expect((await patch(id, { status: 'in_review', note: 'still on it' })).status).toBe(200);
      expect((await patch(id, { status: 'resolved' })).status).toBe(200);

      const res = await get(`?session=${id}`);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toStrictEqual(['notes', 'session', 'status_history']);
      expect(res.body.session).toMatchObject({
        session_id: id,
        client_id: lic.record.client_id,
        status: 'resolved',
        client: 'Acme Water District',
      });
      expect(res.body.status_history).toStrictEqual([
        {
          from_status: 'new',
          to_status: 'in_review',
          changed_by: ADMIN_EMAIL,
          note: 'started',
          changed_at: expect.any(String),
        },
        {
          from_status: 'in_review',
          to_status: 'resolved',
          changed_by: ADMIN_EMAIL,
          note: null,
          changed_at: expect.any(String),
        },
      ]);
      expect(res.body.notes).toStrictEqual([
        { author: ADMIN_EMAIL, note: 'started', created_at: expect.any(String) },
        { author: ADMIN_EMAIL, note: 'still on it', created_at: expect.any(String) },
      ]);
    });

    it('404 for an unknown session and out of scope alike, 401 without a JWT', async () => {
      expect((await get(`?session=${newSessionId()}`)).status).toBe(404);
      const lic = await createLicense(portal);
      const id = await upload(lic.key, { files: false });
      const outsider = await createScopedUser(portal, [uniqueClientId('other')]);
      expect((await get(`?session=${id}`, outsider.token)).status).toBe(404);
      const insider = await createScopedUser(portal, [lic.record.client_id]);
      expect((await get(`?session=${id}`, insider.token)).status).toBe(200);
      expect((await http(portal.url, 'GET', `/api/sessions?session=${id}`, { headers: withKey(lic.key) })).status).toBe(
        401,
      );
    });
  });

  describe('PATCH status', () => {
    it('walks through all four statuses, each change in the history, audited and published', async () => {
      const lic = await createLicense(portal);
      const id = await upload(lic.key, { target: 'walk.example' });
      const bus = collectEvents(portal);
      const answers = [];
      let previous = 'new';
      try {
        for (const status of ['in_review', 'resolved', 'archived', 'new']) {
          clock.advance(1000);
          const res = await patch(id, { status, note: `to ${status}` });
          expect(res.status, res.text).toBe(200);
          expect(res.body).toStrictEqual({
            success: true,
            session_id: id,
            previous_status: previous,
            status,
            changed: true,
            changed_at: clock.now().toISOString(),
          });
          answers.push(res.body);
          previous = status;
        }
      } finally {
        await bus.stop();
      }
      const detail = await get(`?session=${id}`);
      expect(detail.body.session.status).toBe('new');
      expect(
        detail.body.status_history.map(
          (h: { from_status: string; to_status: string }) => `${h.from_status}>${h.to_status}`,
        ),
      ).toStrictEqual(['new>in_review', 'in_review>resolved', 'resolved>archived', 'archived>new']);

      const audit = (
        await db.query(
          "SELECT * FROM audit_events WHERE event_type = 'status_changed' AND session_id = $1 ORDER BY id",
          [id],
        )
      ).rows;
      expect(audit).toHaveLength(4);
      const published = bus.of('status_changed', id);
      expect(published).toHaveLength(4);
      for (const [i, row] of audit.entries()) {
        const expected = {
          session_id: id,
          client: 'Acme Water District',
          client_id: lic.record.client_id,
          target: 'walk.example',
          previous_status: answers[i]!.previous_status,
          new_status: answers[i]!.status,
          changed_by: ADMIN_EMAIL,
          changed_at: answers[i]!.changed_at,
        };
        expect(row.data).toStrictEqual(expected);
        expect(row.actor).toBe(ADMIN_EMAIL);
        expect(row.client_id).toBe(lic.record.client_id);
        expect(published[i]).toMatchObject({
          id: Number(row.id),
          event_type: 'status_changed',
          session_id: id,
          client_id: lic.record.client_id,
          data: expected,
        });
      }
    });

    it('concurrent changes of one session serialise: the history is one unbroken chain, one audit row and event per change', async () => {
      const lic = await createLicense(portal);
      const id = await upload(lic.key, { target: 'race.example' });
      const bus = collectEvents(portal);
      const targets = Array.from({ length: 3 }, () => [
        'in_review',
        'resolved',
        'archived',
        'new',
        'resolved',
        'in_review',
        'archived',
        'resolved',
        'new',
        'archived',
        'in_review',
        'resolved',
      ]).flat();
      let answers: { body: { previous_status: string; status: string; changed: boolean } }[];
      try {
        answers = await Promise.all(targets.map((status) => patch(id, { status })));
      } finally {
        await bus.stop();
      }
      for (const a of answers) expect(a.body).toMatchObject({ success: true });
      const detail = await get(`?session=${id}`);
      const history = detail.body.status_history as { from_status: string; to_status: string }[];
      const changes = answers.filter((a) => a.body.changed).length;
      expect(history).toHaveLength(changes);
      // Each change starts from where the one before it ended, and the last one is the session's status.
      let status = 'new';
      for (const h of history) {
        expect(h.from_status).toBe(status);
        expect(h.to_status).not.toBe(h.from_status);
        status = h.to_status;
      }
      expect(detail.body.session.status).toBe(status);
      // Every answer that says "changed" names a real transition of that chain.
      const transitions = history.map((h) => `${h.from_status}>${h.to_status}`).sort();
      expect(
        answers
          .filter((a) => a.body.changed)
          .map((a) => `${a.body.previous_status}>${a.body.status}`)
          .sort(),
      ).toStrictEqual(transitions);
      const audit = (
        await db.query(
          "SELECT data FROM audit_events WHERE event_type = 'status_changed' AND session_id = $1 ORDER BY id",
          [id],
        )
      ).rows;
      expect(audit.map((r) => `${r.data.previous_status}>${r.data.new_status}`).sort()).toStrictEqual(transitions);
      expect(bus.of('status_changed', id)).toHaveLength(changes);
    });

    it('an invalid status or body is 400 and changes nothing', async () => {
      const lic = await createLicense(portal);
      const id = await upload(lic.key, { files: false });
      for (const body of [
        { status: 'closed' },
        { status: 'NEW' },
        {},
        { note: 'x' },
        { status: 'resolved', extra: 1 },
        { status: 'resolved', note: '' },
        { status: 42 },
        { status: 'resolved', note: 'a\u0000b' },
        { status: 'resolved', note: 'a\ud800b' },
      ]) {
        const res = await patch(id, body);
        expect(res.status, JSON.stringify(body)).toBe(400);
      }
      expect((await get(`?session=${id}`)).body).toMatchObject({
        session: { status: 'new' },
        status_history: [],
        notes: [],
      });
    });

    it('the same status again with a note: changed false, note recorded, no history, no event', async () => {
      const lic = await createLicense(portal);
      const id = await upload(lic.key, { files: false });
      const bus = collectEvents(portal);
      try {
        const res = await patch(id, { status: 'new', note: 'checked, nothing to do' });
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ success: true, previous_status: 'new', status: 'new', changed: false });
      } finally {
        await bus.stop();
      }
      const detail = await get(`?session=${id}`);
      expect(detail.body.status_history).toStrictEqual([]);
      expect(detail.body.notes).toStrictEqual([
        { author: ADMIN_EMAIL, note: 'checked, nothing to do', created_at: expect.any(String) },
      ]);
      expect(bus.of('status_changed', id)).toStrictEqual([]);
      expect(
        (
          await db.query(
            "SELECT count(*)::int AS n FROM audit_events WHERE event_type = 'status_changed' AND session_id = $1",
            [id],
          )
        ).rows[0].n,
      ).toBe(0);
    });

    it("a key may not change it (403, tests/session-key-limits.slow.test.ts); another client's user gets 404", async () => {
      const lic = await createLicense(portal);
      const other = await createLicense(portal);
      const id = await upload(lic.key, { files: false });

      const own = await patch(id, { status: 'in_review' }, withKey(lic.key));
      expect([own.status, own.body]).toEqual([
        403,
        {
          error:
            "A key cannot change a session's review status: that takes an identity token (X-Identity-Token) with update:status",
        },
      ]);
      const member = await createScopedUser(portal, [lic.record.client_id]);
      const changed = await patch(id, { status: 'resolved' }, withToken(member.token));
      expect(changed.status, changed.text).toBe(200);
      const audit = (
        await db.query("SELECT actor, data FROM audit_events WHERE event_type = 'status_changed' AND session_id = $1", [
          id,
        ])
      ).rows;
      expect(audit.map((a) => [a.actor, a.data.changed_by])).toEqual([[member.email, member.email]]);

      const scoped = await createScopedUser(portal, [other.record.client_id]);
      expect((await patch(id, { status: 'archived' }, withToken(scoped.token))).status).toBe(404);
      expect((await patch(id, { status: 'archived' }, {})).status).toBe(401);
      expect((await patch(id, { status: 'archived' }, withKey('not-a-key'))).status).toBe(403);
      expect((await get(`?session=${id}`)).body.session.status).toBe('resolved');
      expect((await patch(newSessionId(), { status: 'archived' })).status).toBe(404);
    });
  });

  describe('DELETE', () => {
    it('removes rows and files, audits session_deleted and publishes it after the files are gone, then 404', async () => {
      const lic = await createLicense(portal);
      const id = await upload(lic.key);
      expect((await patch(id, { status: 'in_review', note: 'n' })).status).toBe(200);
      const files = (await filesOf(id))!;
      expect(Object.keys(files).sort()).toStrictEqual(['pipeline.log', 'report.html', 'session_results.json']);
      for (const f of Object.values(files)) expect(await exists(f.key)).toBe(true);

      let filesAtEvent: boolean[] | null = null;
      let rowAtEvent: unknown = 'unset';
      const unsubscribe = portal.ctx.events.subscribe(async (e) => {
        if (e.event_type !== 'session_deleted' || e.session_id !== id) return;
        filesAtEvent = await Promise.all(Object.values(files).map((f) => exists(f.key)));
        rowAtEvent = (await db.query('SELECT 1 FROM sessions WHERE session_id = $1', [id])).rows[0];
      });
      const bus = collectEvents(portal);
      let res: Awaited<ReturnType<typeof del>>;
      try {
        clock.advance(1000);
        res = await del(id);
      } finally {
        await bus.stop();
        unsubscribe();
      }
      expect(res.status, res.text).toBe(200);
      expect(res.body).toStrictEqual({ success: true, session_id: id });

      for (const f of Object.values(files)) expect(await exists(f.key)).toBe(false);
      for (const table of ['sessions', 'share_tokens', 'status_history', 'session_notes']) {
        expect(
          (await db.query(`SELECT count(*)::int AS n FROM ${table} WHERE session_id = $1`, [id])).rows[0].n,
          table,
        ).toBe(0);
      }
      expect(filesAtEvent).toStrictEqual([false, false, false]);
      expect(rowAtEvent).toBeUndefined();

      const audit = (
        await db.query("SELECT * FROM audit_events WHERE event_type = 'session_deleted' AND session_id = $1", [id])
      ).rows;
      expect(audit).toHaveLength(1);
      const expected = {
        session_id: id,
        client: 'Acme Water District',
        client_id: lic.record.client_id,
        deleted_by: ADMIN_EMAIL,
        deleted_at: clock.now().toISOString(),
      };
      expect(audit[0].data).toStrictEqual(expected);
      expect(audit[0].actor).toBe(ADMIN_EMAIL);
      const published = bus.of('session_deleted', id);
      expect(published).toHaveLength(1);
      expect(published[0]).toMatchObject({ id: Number(audit[0].id), data: expected });
      // The audit history of the session survives it.
      expect(
        (
          await db.query(
            "SELECT count(*)::int AS n FROM audit_events WHERE event_type = 'scan_completed' AND session_id = $1",
            [id],
          )
        ).rows[0].n,
      ).toBe(1);

      expect((await get(`?session=${id}`)).status).toBe(404);
      expect((await del(id)).status).toBe(404);
      expect((await patch(id, { status: 'new' })).status).toBe(404);
    });

    it("the key that uploaded it may delete it at once (limits: tests/session-key-limits.slow.test.ts); another client's key or scope gets 404", async () => {
      const lic = await createLicense(portal);
      const other = await createLicense(portal);
      const id = await upload(lic.key);
      expect((await del(id, withKey(other.key))).status).toBe(404);
      const scoped = await createScopedUser(portal, [other.record.client_id]);
      expect((await del(id, withToken(scoped.token))).status).toBe(404);
      expect((await del(id, {})).status).toBe(401);
      expect(await filesOf(id)).not.toBeNull();

      const res = await del(id, withKey(lic.key));
      expect(res.status).toBe(200);
      const audit = (
        await db.query(
          "SELECT actor, data FROM audit_events WHERE event_type = 'session_deleted' AND session_id = $1",
          [id],
        )
      ).rows;
      expect(audit[0].actor).toBe(`license:${lic.record.id}`);
      expect(audit[0].data.deleted_by).toBe(`license:${lic.record.id}`);
      expect(await filesOf(id)).toBeNull();
    });
  });
});

describe('retention', () => {
  const start = new Date(Math.floor(Date.now() / 1000) * 1000);
  const clock = new FakeClock(start);
  let portal: TestPortal;
  let db: pg.Client;
  // Tokens are issued and checked on the portal's clock, which these tests move by days:
  // log in again whenever the clock has moved away from the last token's issue time.
  let cached: { token: string; at: number } | null = null;
  const adminToken = async () => {
    const t = clock.now().getTime();
    if (cached === null || t < cached.at || t - cached.at > 30 * 60_000)
      cached = { token: await login(portal.url, ADMIN_EMAIL, ADMIN_PASSWORD), at: t };
    return cached.token;
  };
  const newLicense = async (clientId: string) => createLicense(portal, { client_id: clientId }, await adminToken());
  const detail = async (id: string) =>
    http(portal.url, 'GET', `/api/sessions?session=${id}`, { headers: withToken(await adminToken()) });

  usePortalWithDb(
    (p) => {
      ({ portal, db } = p);
    },
    { now: clock.now, env: { SVC_SESSION_RETENTION_DAYS: '10' } },
  );

  const list = async () => http(portal.url, 'GET', '/api/sessions', { headers: withToken(await adminToken()) });
  const exists = (key: string) =>
    fs.stat(blobPath(portal.dataDir, key)).then(
      () => true,
      () => false,
    );

  it('expires_at is uploaded_at plus SVC_SESSION_RETENTION_DAYS; report_expiring fires once inside the last 7 days, from listing only; the sweep removes expired sessions and audits it', async () => {
    const lic = await newLicense(uniqueClientId('ret'));
    const early = newSessionId();
    const res = await postUpload(
      portal.url,
      lic.key,
      sessionParts(sessionDoc('session-complete.json', early), { log: LOG, report: REPORT }),
    );
    expect(res.status).toBe(200);
    clock.advance(5 * DAY_MS);
    const late = newSessionId();
    expect((await postUpload(portal.url, lic.key, sessionParts(sessionDoc('session-minimal.json', late)))).status).toBe(
      200,
    );

    const shown = await detail(early);
    expect(shown.body.session.uploaded_at).toBe(start.toISOString());
    expect(shown.body.session.expires_at).toBe(new Date(start.getTime() + 10 * DAY_MS).toISOString());

    const bus = collectEvents(portal);
    try {
      // Day 2 (8 days left): outside the window.
      clock.set(new Date(start.getTime() + 2 * DAY_MS));
      expect((await list()).status).toBe(200);
      await portal.ctx.events.drain();
      expect(bus.of('report_expiring')).toStrictEqual([]);

      // Day 4 (6 days left): inside. The detail view does not fire it; the listing does, once.
      clock.set(new Date(start.getTime() + 4 * DAY_MS));
      await detail(early);
      await portal.ctx.events.drain();
      expect(bus.of('report_expiring')).toStrictEqual([]);
      const [l1, l2] = await Promise.all([list(), list()]);
      expect([l1.status, l2.status]).toStrictEqual([200, 200]);
      await portal.ctx.events.drain();
      expect(bus.of('report_expiring')).toHaveLength(1);
      expect(bus.of('report_expiring')[0]).toMatchObject({
        event_type: 'report_expiring',
        session_id: early,
        client_id: lic.record.client_id,
        data: {
          session_id: early,
          client: 'Acme Water District',
          client_id: lic.record.client_id,
          target: '10.20.0.0/24',
          uploaded_at: start.toISOString(),
          expires_at: new Date(start.getTime() + 10 * DAY_MS).toISOString(),
          days_remaining: 6,
        },
      });
      expect(Object.keys(bus.of('report_expiring')[0]!.data).sort()).toStrictEqual([
        'client',
        'client_id',
        'days_remaining',
        'expires_at',
        'session_id',
        'target',
        'uploaded_at',
      ]);
      const marker = (await db.query('SELECT expiry_notified_at FROM sessions WHERE session_id = $1', [early])).rows[0]
        .expiry_notified_at as Date;
      expect(marker.toISOString()).toBe(clock.now().toISOString());

      // Never twice: later listings inside the window, and a retention sweep before expiry.
      clock.set(new Date(start.getTime() + 9 * DAY_MS));
      expect(await sweepExpiredSessions(portal.ctx)).toBe(0);
      await list();
      await portal.ctx.events.drain();
      expect(bus.of('report_expiring', early)).toHaveLength(1);
      // The late session (uploaded day 5, expires day 15) entered its window at day 8.
      expect(bus.of('report_expiring', late)).toHaveLength(1);
      expect(bus.of('report_expiring', late)[0]!.data['days_remaining']).toBe(6);
    } finally {
      await bus.stop();
    }

    // Past expiry: the sweep removes the session completely and audits actor `retention`.
    const files = (await db.query('SELECT files FROM sessions WHERE session_id = $1', [early])).rows[0].files as Record<
      string,
      FileRef
    >;
    expect(Object.keys(files)).toHaveLength(3);
    clock.set(new Date(start.getTime() + 10 * DAY_MS));
    const deleted = collectEvents(portal);
    let removed: number;
    try {
      removed = await sweepExpiredSessions(portal.ctx);
    } finally {
      await deleted.stop();
    }
    expect(removed).toBe(1);
    for (const f of Object.values(files)) expect(await exists(f.key)).toBe(false);
    expect((await db.query('SELECT count(*)::int AS n FROM sessions WHERE session_id = $1', [early])).rows[0].n).toBe(
      0,
    );
    expect(
      (await db.query('SELECT count(*)::int AS n FROM share_tokens WHERE session_id = $1', [early])).rows[0].n,
    ).toBe(0);
    const audit = (
      await db.query("SELECT actor, data FROM audit_events WHERE event_type = 'session_deleted' AND session_id = $1", [
        early,
      ])
    ).rows;
    expect(audit).toHaveLength(1);
    expect(audit[0].actor).toBe('retention');
    expect(audit[0].data).toMatchObject({
      session_id: early,
      client_id: lic.record.client_id,
      deleted_by: 'retention',
      deleted_at: clock.now().toISOString(),
    });
    expect(deleted.of('session_deleted', early)).toHaveLength(1);
    expect((await detail(early)).status).toBe(404);

    // The late session is untouched until its own expiry.
    expect((await db.query('SELECT count(*)::int AS n FROM sessions WHERE session_id = $1', [late])).rows[0].n).toBe(1);
    clock.set(new Date(start.getTime() + 15 * DAY_MS));
    expect(await sweepExpiredSessions(portal.ctx)).toBe(1);
    expect(await sweepExpiredSessions(portal.ctx)).toBe(0);
  });

  it('the sweep never deletes a session renewed after the sweep picked it', async () => {
    clock.set(new Date(start.getTime() + 200 * DAY_MS));
    const lic = await newLicense(uniqueClientId('race'));
    const id = newSessionId();
    expect(
      (await postUpload(portal.url, lic.key, sessionParts(sessionDoc('session-minimal.json', id), { log: LOG })))
        .status,
    ).toBe(200);
    const files = (await db.query('SELECT files FROM sessions WHERE session_id = $1', [id])).rows[0].files as Record<
      string,
      FileRef
    >;
    clock.advance(11 * DAY_MS);

    // Hold the row, as a re-upload committing at that moment would, and let the sweep run into it.
    const other = await openDb(portal);
    try {
      await other.query('BEGIN');
      await other.query('SELECT 1 FROM sessions WHERE session_id = $1 FOR UPDATE', [id]);
      const sweeping = sweepExpiredSessions(portal.ctx);
      const deadline = Date.now() + 30_000;
      for (;;) {
        const waiting = await db.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE 'delete from "sessions"%'`,
        );
        if (waiting.rows[0].n > 0) break;
        if (Date.now() > deadline) throw new Error('the sweep never reached the locked row');
        await new Promise((r) => setTimeout(r, 20));
      }
      // The "re-upload" renews the session and commits while the sweep's DELETE waits.
      await other.query(`UPDATE sessions SET expires_at = $2, version = version + 1 WHERE session_id = $1`, [
        id,
        new Date(clock.now().getTime() + 10 * DAY_MS),
      ]);
      await other.query('COMMIT');
      await sweeping;
    } finally {
      await other.end();
    }
    expect((await db.query('SELECT count(*)::int AS n FROM sessions WHERE session_id = $1', [id])).rows[0].n).toBe(1);
    for (const f of Object.values(files)) expect(await exists(f.key)).toBe(true);
    expect(
      (
        await db.query(
          "SELECT count(*)::int AS n FROM audit_events WHERE event_type = 'session_deleted' AND session_id = $1",
          [id],
        )
      ).rows[0].n,
    ).toBe(0);
  });

  it('a re-upload renews expires_at and re-arms report_expiring', async () => {
    clock.set(new Date(start.getTime() + 100 * DAY_MS));
    const lic = await newLicense(uniqueClientId('renew'));
    const id = newSessionId();
    expect((await postUpload(portal.url, lic.key, sessionParts(sessionDoc('session-minimal.json', id)))).status).toBe(
      200,
    );
    const bus = collectEvents(portal);
    try {
      clock.advance(5 * DAY_MS);
      await list();
      await portal.ctx.events.drain();
      expect(bus.of('report_expiring', id)).toHaveLength(1);
      const again = await postUpload(portal.url, lic.key, sessionParts(sessionDoc('session-minimal.json', id)));
      expect(again.body.message).toBe('Session replaced');
      const row = (await db.query('SELECT expires_at, expiry_notified_at FROM sessions WHERE session_id = $1', [id]))
        .rows[0];
      expect((row.expires_at as Date).toISOString()).toBe(new Date(clock.now().getTime() + 10 * DAY_MS).toISOString());
      expect(row.expiry_notified_at).toBeNull();
      await list();
      clock.advance(4 * DAY_MS);
      await list();
      await portal.ctx.events.drain();
      expect(bus.of('report_expiring', id)).toHaveLength(2);
    } finally {
      await bus.stop();
    }
  });
});
