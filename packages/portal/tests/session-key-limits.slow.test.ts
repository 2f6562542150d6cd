import { Kysely, PostgresDialect } from 'kysely';
import { migrateToLatest } from '../src/db/migrate.ts';
import type { Database } from '../src/db/schema.ts';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createLicense,
  createScopedUser,
  FakeClock,
  uniqueClientId,
  type LicenseFixture,
} from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { createTestDatabase, LEGACY_KEY, type TestPortal } from '@svc/test-support/portal';
import { usePortalWithDb } from '@svc/test-support/portal-db';
import { newSessionId, postUpload, sessionDoc, sessionParts } from '@svc/test-support/upload';
import { migrateBefore } from './helpers/migrate-before.ts';

/**
 * What a scanner key may do to a session's history (docs/api.md#sessions),
 * over HTTP against the real portal on a real database, with the portal's clock moved by hand:
 * a key deletes only a session it uploaded itself, within 15 minutes of its first upload, while
 * nobody has triaged it; it never changes a review status. Identities with update:status may.
 */

const MINUTE = 60_000;
const BY_IDENTITY = 'takes an identity token (X-Identity-Token) with update:status';
const notUploader = (id: string) => ({
  error: `Session ${id} was not uploaded with this key: a key may delete only a session it uploaded itself; deleting it ${BY_IDENTITY}`,
});
const tooOld = (id: string) => ({
  error: `Session ${id} was uploaded more than 15 minutes ago: a key may delete a session it uploaded only within 15 minutes of the upload; deleting it ${BY_IDENTITY}`,
});
const triaged = (id: string, why: string) => ({
  error: `Session ${id} has been triaged (${why}): a key may delete only a session nobody has triaged; deleting it ${BY_IDENTITY}`,
});
const KEY_ARCHIVE = { error: `A key cannot archive a session: archiving ${BY_IDENTITY}` };
const KEY_STATUS = { error: `A key cannot change a session's review status: that ${BY_IDENTITY}` };
const SSH = 'SSH allows password authentication';

describe('what a scanner key may do to a session', () => {
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

  /** Uploads a fresh session (or `id` again) with `key`; the file names `clientId` when given (the legacy key). */
  const upload = async (key: string, opts: { id?: string; clientId?: string } = {}) => {
    const id = opts.id ?? newSessionId();
    const doc = sessionDoc('session-minimal.json', id);
    if (opts.clientId !== undefined) doc['metadata']['client_id'] = opts.clientId;
    const res = await postUpload(portal.url, key, sessionParts(doc));
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.text}`);
    return id;
  };
  const del = (id: string, headers: Record<string, string>) =>
    http(portal.url, 'DELETE', `/api/sessions?session=${id}`, { headers });
  const patch = (id: string, body: unknown, headers: Record<string, string>) =>
    http(portal.url, 'PATCH', `/api/sessions?session=${id}`, { headers, json: body });
  const stored = async (id: string) =>
    (await db.query('SELECT count(*)::int AS n FROM sessions WHERE session_id = $1', [id])).rows[0].n === 1;
  const deletedBy = async (id: string) =>
    (
      await db.query("SELECT actor FROM audit_events WHERE event_type = 'session_deleted' AND session_id = $1", [id])
    ).rows.map((r) => r.actor);
  /** A key of a client of its own, so no other test's triage touches its target. */
  const freshKey = () => createLicense(portal, { tier: 'business' });

  it('the key that uploaded a session deletes it while it is fresh and untriaged: 200, audited as that key', async () => {
    const key = await freshKey();
    const id = await upload(key.key);
    clock.advance(MINUTE);
    const res = await del(id, withKey(key.key));
    expect([res.status, res.body]).toEqual([200, { success: true, session_id: id }]);
    expect(await stored(id)).toBe(false);
    expect(await deletedBy(id)).toEqual([`license:${key.record.id}`]);
    expect((await del(id, withKey(key.key))).body).toEqual({ error: 'Session not found' });
  });

  it("another key of the same client and the legacy key get 403; another client's key 404; the session stays", async () => {
    const key = await freshKey();
    const sameClient = await createLicense(portal, { client_id: key.record.client_id });
    const otherClient = await freshKey();
    const id = await upload(key.key);

    const same = await del(id, withKey(sameClient.key));
    expect([same.status, same.body]).toEqual([403, notUploader(id)]);
    const legacy = await del(id, withKey(LEGACY_KEY));
    expect([legacy.status, legacy.body]).toEqual([403, notUploader(id)]);
    const other = await del(id, withKey(otherClient.key));
    expect([other.status, other.body]).toEqual([404, { error: 'Session not found' }]);
    const bogus = await del(id, withKey(`svc_biz_${'0'.repeat(64)}`));
    expect([bogus.status, bogus.body]).toEqual([403, { error: 'Invalid API key' }]);
    expect((await del(id, {})).status).toBe(401);
    expect(await stored(id)).toBe(true);
    expect(await deletedBy(id)).toEqual([]);
  });

  it('the legacy key deletes a fresh session it uploaded itself', async () => {
    const clientId = uniqueClientId('legacy');
    const id = await upload(LEGACY_KEY, { clientId });
    const res = await del(id, withKey(LEGACY_KEY));
    expect([res.status, res.body]).toEqual([200, { success: true, session_id: id }]);
    expect(await deletedBy(id)).toEqual(['legacy-key']);
  });

  it('15 minutes after the first upload the key may not delete it, and a re-upload does not renew the window', async () => {
    const key = await freshKey();
    const atEdge = await upload(key.key);
    const late = await upload(key.key);
    clock.advance(15 * MINUTE);
    const edge = await del(atEdge, withKey(key.key));
    expect([edge.status, edge.body]).toEqual([200, { success: true, session_id: atEdge }]);
    clock.advance(1000);
    const refused = await del(late, withKey(key.key));
    expect([refused.status, refused.body]).toEqual([403, tooOld(late)]);
    expect(await stored(late)).toBe(true);

    const reuploaded = await upload(key.key);
    clock.advance(10 * MINUTE);
    await upload(key.key, { id: reuploaded });
    clock.advance(5 * MINUTE + 1000);
    const again = await del(reuploaded, withKey(key.key));
    expect([again.status, again.body]).toEqual([403, tooOld(reuploaded)]);
    expect(await stored(reuploaded)).toBe(true);
  });

  it('once anyone triaged it the key may not delete it: a status change, a note, a remediation update, a finding changed', async () => {
    const cases: { why: string; triage: (id: string, key: LicenseFixture) => Promise<number> }[] = [
      {
        why: 'its review status was changed',
        triage: async (id) => (await patch(id, { status: 'in_review' }, withToken(admin))).status,
      },
      {
        why: 'a note was left on it',
        triage: async (id) => (await patch(id, { status: 'new', note: 'looking at it' }, withToken(admin))).status,
      },
      {
        why: 'a remediation update named it',
        triage: async (id) =>
          (
            await http(portal.url, 'PATCH', '/api/remediation-update', {
              headers: withToken(admin),
              json: { session_id: id, items: [{ title: SSH, status: 'in_progress' }] },
            })
          ).status,
      },
      {
        why: 'a person changed a finding of its target since its upload',
        triage: async (_id, key) =>
          (
            await http(portal.url, 'POST', '/api/findings/bulk', {
              headers: withToken(admin),
              json: { filter: { client_id: key.record.client_id }, change: { note: 'seen in the weekly review' } },
            })
          ).status,
      },
    ];
    for (const c of cases) {
      const key = await freshKey();
      const id = await upload(key.key);
      expect(await c.triage(id, key), c.why).toBe(200);
      const res = await del(id, withKey(key.key));
      expect([res.status, res.body], c.why).toEqual([403, triaged(id, c.why)]);
      expect(await stored(id), c.why).toBe(true);
    }
  });

  it('a triage of the target before the upload does not stop the key deleting its newer session', async () => {
    const key = await freshKey();
    await upload(key.key);
    const bulk = await http(portal.url, 'POST', '/api/findings/bulk', {
      headers: withToken(admin),
      json: { filter: { client_id: key.record.client_id }, change: { status: 'deferred' } },
    });
    expect(bulk.status, bulk.text).toBe(200);
    clock.advance(1000);
    const id = await upload(key.key);
    const res = await del(id, withKey(key.key));
    expect([res.status, res.body]).toEqual([200, { success: true, session_id: id }]);
  });

  it('a key cannot archive a session or change its review status, even its own fresh one: 403, nothing recorded', async () => {
    const key = await freshKey();
    const id = await upload(key.key);
    for (const headers of [withKey(key.key), withKey(LEGACY_KEY)]) {
      const archive = await patch(id, { status: 'archived' }, headers);
      expect([archive.status, archive.body]).toEqual([403, KEY_ARCHIVE]);
      const review = await patch(id, { status: 'in_review', note: 'n' }, headers);
      expect([review.status, review.body]).toEqual([403, KEY_STATUS]);
    }
    // Refused before the session is looked up: a missing id answers the same.
    expect((await patch(newSessionId(), { status: 'archived' }, withKey(key.key))).body).toEqual(KEY_ARCHIVE);
    const bogus = await patch(id, { status: 'archived' }, withKey(`svc_biz_${'0'.repeat(64)}`));
    expect([bogus.status, bogus.body]).toEqual([403, { error: 'Invalid API key' }]);
    expect((await patch(id, { status: 'archived' }, {})).status).toBe(401);
    for (const table of ['status_history', 'session_notes'])
      expect((await db.query(`SELECT count(*)::int AS n FROM ${table} WHERE session_id = $1`, [id])).rows[0].n).toBe(0);
    const detail = await http(portal.url, 'GET', `/api/sessions?session=${id}`, { headers: withToken(admin) });
    expect(detail.body.session.status).toBe('new');
    // Still untriaged: the key may still delete it.
    expect((await del(id, withKey(key.key))).status).toBe(200);
  });

  it('an admin and a scoped user with update:status archive and delete what no key may', async () => {
    const key = await freshKey();
    const other = await createLicense(portal, { client_id: key.record.client_id });
    const member = await createScopedUser(portal, [key.record.client_id]);
    const byAdmin = await upload(key.key);
    const byMember = await upload(key.key);
    clock.advance(20 * MINUTE);
    for (const [id, token] of [
      [byAdmin, admin],
      [byMember, member.token],
    ] as const) {
      expect((await del(id, withKey(other.key))).status).toBe(403);
      const archived = await patch(id, { status: 'archived' }, withToken(token));
      expect([archived.status, archived.body]).toEqual([
        200,
        {
          success: true,
          session_id: id,
          status: 'archived',
          previous_status: 'new',
          changed: true,
          changed_at: clock.now().toISOString(),
        },
      ]);
      expect((await del(id, withKey(key.key))).body).toEqual(tooOld(id));
      const res = await del(id, withToken(token));
      expect([res.status, res.body]).toEqual([200, { success: true, session_id: id }]);
    }
    expect(await deletedBy(byAdmin)).toEqual(['admin@test.local']);
    expect(await deletedBy(byMember)).toEqual([member.email]);
  });
});

describe('migration 0018_session_first_upload', () => {
  const dbs: Kysely<unknown>[] = [];
  afterAll(async () => {
    await Promise.all(dbs.map((d) => d.destroy()));
  });
  it('takes the upload time of sessions stored before it, and of rows written without one', async () => {
    const url = await createTestDatabase();
    const db = new Kysely<unknown>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }),
    });
    dbs.push(db);
    await migrateBefore(db, '0018_session_first_upload');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const row = (id: string, at: string) =>
        client.query(
          `INSERT INTO sessions (session_id, client_id, metadata, files, uploaded_at, updated_at, expires_at)
           VALUES ($1, 'c', '{}', '{}', $2, $2, $2::timestamptz + interval '90 days')`,
          [id, at],
        );
      await row('20250101_000000', '2025-01-01T00:00:00Z');
      await migrateToLatest(db as Kysely<Database>);
      await row('20250102_000000', '2025-01-02T00:00:00Z');
      await client.query(
        "UPDATE sessions SET uploaded_at = '2025-03-01T00:00:00Z' WHERE session_id = '20250102_000000'",
      );
      const { rows } = await client.query(
        'SELECT session_id, first_uploaded_at, uploaded_at FROM sessions ORDER BY session_id',
      );
      expect(rows.map((r) => [r.session_id, r.first_uploaded_at.toISOString(), r.uploaded_at.toISOString()])).toEqual([
        ['20250101_000000', '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z'],
        ['20250102_000000', '2025-01-02T00:00:00.000Z', '2025-03-01T00:00:00.000Z'],
      ]);
    } finally {
      await client.end();
    }
  });
});
