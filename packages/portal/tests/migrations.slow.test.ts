import pg from 'pg';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate.ts';
import { migrations } from '../src/db/migrations/index.ts';
import { deriveMetadata } from '../src/sessions/derive.ts';
import { openDatabase, type DatabaseHandle } from '../src/db/pool.ts';
import { http } from '@svc/test-support/http';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  createTestDatabase,
  login,
  startTestPortal,
  type TestPortal,
} from '@svc/test-support/portal';
import { sessionDoc } from '@svc/test-support/upload';
import { migrateBefore } from './helpers/migrate-before.ts';

/** Kysely's migrator on a real PostgreSQL: applied once, skipped after, safe for replicas starting together. */

const ALL = Object.keys(migrations);

async function query<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

const appliedNames = async (url: string) =>
  (await query<{ name: string }>(url, 'SELECT name FROM schema_migrations ORDER BY name')).map((r) => r.name);

describe('migrations', () => {
  const handles: DatabaseHandle[] = [];
  /** A fresh database migrated up to (not including) migration `name`. */
  const databaseBefore = async (name: string) => {
    const url = await createTestDatabase();
    const handle = openDatabase(url, { max: 2, logger: pino({ level: 'silent' }) });
    handles.push(handle);
    await migrateBefore(handle.db, name);
    return { url, handle };
  };
  const portals: TestPortal[] = [];
  afterAll(async () => {
    await Promise.all(portals.map((p) => p.close()));
    await Promise.all(handles.map((h) => h.close()));
  });

  it('are listed in order, with names that sort the way they run', () => {
    expect(ALL[0]).toBe('0001_foundation');
    expect([...ALL].sort()).toEqual(ALL);
    for (const name of ALL) expect(name).toMatch(/^\d{4}_[a-z0-9_]+$/);
  });

  it('migrating a fresh database twice applies each migration once', async () => {
    const url = await createTestDatabase();
    const handle = openDatabase(url, { max: 2, logger: pino({ level: 'silent' }) });
    handles.push(handle);

    expect(await migrateToLatest(handle.db)).toEqual(ALL);
    expect(await migrateToLatest(handle.db)).toEqual([]);
    expect(await appliedNames(url)).toEqual([...ALL].sort());

    // A second process (another pool) sees nothing left to do either.
    const other = openDatabase(url, { max: 2, logger: pino({ level: 'silent' }) });
    handles.push(other);
    expect(await migrateToLatest(other.db)).toEqual([]);
    expect(await appliedNames(url)).toEqual([...ALL].sort());
    // The tables of the first migration exist (the migration ran, not only its bookkeeping).
    const tables = (
      await query<{ table_name: string }>(
        url,
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
      )
    ).map((r) => r.table_name);
    expect(tables).toEqual(
      expect.arrayContaining([
        'audit_events',
        'identity_signing_keys',
        'licenses',
        'refresh_tokens',
        'schema_migrations',
        'schema_migrations_lock',
        'users',
      ]),
    );
  });

  it('concurrent migrators on one fresh database: each migration is applied by exactly one of them', async () => {
    const url = await createTestDatabase();
    const runners = Array.from({ length: 4 }, () => openDatabase(url, { max: 2, logger: pino({ level: 'silent' }) }));
    handles.push(...runners);
    const results = await Promise.all(runners.map((h) => migrateToLatest(h.db)));
    expect(results.flat().sort()).toEqual([...ALL].sort());
    expect(await appliedNames(url)).toEqual([...ALL].sort());
  });

  it('two portals started together on one fresh database both come up and share one schema, key and admin', async () => {
    const url = await createTestDatabase();
    const [a, b] = await Promise.all([startTestPortal({ databaseUrl: url }), startTestPortal({ databaseUrl: url })]);
    portals.push(a, b);

    expect(await appliedNames(url)).toEqual([...ALL].sort());
    expect(await query(url, 'SELECT email FROM users')).toEqual([{ email: ADMIN_EMAIL }]);
    expect(await query(url, 'SELECT count(*)::int AS n FROM identity_signing_keys')).toEqual([{ n: 1 }]);

    // Both serve, and a token from one is accepted by the other (the same signing key).
    for (const p of [a, b]) expect((await http(p.url, 'GET', '/api/health')).status).toBe(200);
    const token = await login(a.url, ADMIN_EMAIL, ADMIN_PASSWORD);
    const res = await http(b.url, 'GET', '/api/licenses', { headers: { 'x-identity-token': token } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ licenses: [] });
  });

  it('0005 moves logged attempts into their delivery rows in the API shape, then drops the attempts table', async () => {
    const { url, handle } = await databaseBefore('0005');
    await query(
      url,
      `INSERT INTO webhook_subscriptions (id, url, event_types, signing_secret, created_by) VALUES ('whsub_000000000001', 'https://r.test/', '{status_changed}', 's', 'admin');
       INSERT INTO webhook_deliveries (id, subscription_id, event_id, event_type, body, status) VALUES
         (1, 'whsub_000000000001', 'evt_0000000000000001', 'status_changed', '{}', 'failed'),
         (2, 'whsub_000000000001', 'evt_0000000000000002', 'status_changed', '{}', 'succeeded'),
         (3, 'whsub_000000000001', 'evt_0000000000000003', 'status_changed', '{}', 'pending');
       INSERT INTO webhook_delivery_attempts (delivery_id, attempt, status_code, duration_ms, error, attempted_at) VALUES
         (1, 2, NULL, 5001, 'timeout after 5 s', '2026-11-22 12:00:05.75+01'),
         (1, 1, 503, 12, 'HTTP 503', '2026-11-22 12:00:00+01'),
         (2, 1, 204, 3, NULL, '2026-11-22T11:01:00.123Z');`,
    );

    expect(await migrateToLatest(handle.db)).toEqual(ALL.filter((name) => name >= '0005'));
    expect(await query(url, 'SELECT id::int, status, attempts FROM webhook_deliveries ORDER BY id')).toEqual([
      {
        id: 1,
        status: 'failed',
        attempts: [
          {
            attempt: 1,
            status_code: 503,
            duration_ms: 12,
            error: 'HTTP 503',
            attempted_at: '2026-11-22T11:00:00.000Z',
          },
          {
            attempt: 2,
            status_code: null,
            duration_ms: 5001,
            error: 'timeout after 5 s',
            attempted_at: '2026-11-22T11:00:05.750Z',
          },
        ],
      },
      {
        id: 2,
        status: 'succeeded',
        attempts: [
          { attempt: 1, status_code: 204, duration_ms: 3, error: null, attempted_at: '2026-11-22T11:01:00.123Z' },
        ],
      },
      { id: 3, status: 'pending', attempts: [] },
    ]);
    expect(await query(url, "SELECT to_regclass('webhook_delivery_attempts') AS t")).toEqual([{ t: null }]);
    // Room in each page for the finished version of a row (a HOT update).
    expect(await query(url, "SELECT reloptions FROM pg_class WHERE relname = 'webhook_deliveries'")).toEqual([
      { reloptions: ['fillfactor=45'] },
    ]);
  });

  it('0006 moves failed-login counts from the users rows to login_failures, keyed by the normalised e-mail', async () => {
    const { url, handle } = await databaseBefore('0006');
    await query(
      url,
      `INSERT INTO users (id, email, email_normalized, password_hash, role, failed_logins, locked_until, updated_at) VALUES
         ('usr_a', 'Locked@Example.test', 'locked@example.test', 'x', 'admin', 7, '2026-11-22T12:00:00Z', '2026-11-22T11:00:00Z'),
         ('usr_b', 'counting@example.test', 'counting@example.test', 'x', 'admin', 2, NULL, '2026-11-22T10:00:00Z'),
         ('usr_c', 'clean@example.test', 'clean@example.test', 'x', 'admin', 0, NULL, '2026-11-22T09:00:00Z');`,
    );
    expect(await migrateToLatest(handle.db)).toEqual(ALL.filter((name) => name >= '0006'));
    expect(
      await query(
        url,
        'SELECT email_normalized, failed_logins, locked_until, updated_at FROM login_failures ORDER BY email_normalized',
      ),
    ).toEqual([
      {
        email_normalized: 'counting@example.test',
        failed_logins: 2,
        locked_until: null,
        updated_at: new Date('2026-11-22T10:00:00Z'),
      },
      {
        email_normalized: 'locked@example.test',
        failed_logins: 7,
        locked_until: new Date('2026-11-22T12:00:00Z'),
        updated_at: new Date('2026-11-22T11:00:00Z'),
      },
    ]);
    const columns = (
      await query<{ column_name: string }>(
        url,
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'users'",
      )
    ).map((r) => r.column_name);
    expect(columns).not.toContain('failed_logins');
    expect(columns).not.toContain('locked_until');
  });
  it("0009 gives each logged delivery the client of its event: the event data's client_id, else its subscription's", async () => {
    const { url, handle } = await databaseBefore('0009');
    await query(
      url,
      `INSERT INTO webhook_subscriptions (id, url, event_types, signing_secret, created_by, client_id) VALUES
         ('whsub_00000000000a', 'https://r.test/a', '{scan_completed}', 's', 'admin', 'acme'),
         ('whsub_00000000000b', 'https://r.test/b', '{scan_completed}', 's', 'admin', NULL);
       INSERT INTO webhook_deliveries (id, subscription_id, event_id, event_type, body, status) VALUES
         (1, 'whsub_00000000000a', 'evt_0000000000000001', 'scan_completed', '{"data":{"client_id":"globex","session_id":"s"}}', 'succeeded'),
         (2, 'whsub_00000000000a', 'evt_0000000000000002', 'command_completed', '{"data":{"agent_id":"ag"}}', 'failed'),
         (3, 'whsub_00000000000b', 'evt_0000000000000003', 'ping', '{"data":{"subscription_id":"whsub_00000000000b"}}', 'succeeded'),
         (4, 'whsub_00000000000b', 'evt_0000000000000004', 'scan_completed', '{"data":{"client_id":"initech"}}', 'pending');`,
    );
    expect(await migrateToLatest(handle.db)).toEqual(ALL.filter((name) => name >= '0009'));
    expect(await query(url, 'SELECT id::int, client_id FROM webhook_deliveries ORDER BY id')).toEqual([
      { id: 1, client_id: 'globex' },
      { id: 2, client_id: 'acme' },
      { id: 3, client_id: null },
      { id: 4, client_id: 'initech' },
    ]);
  });

  it('0013 gives earlier sessions their upload time as scan time and no open findings; a row written without one takes its upload time', async () => {
    const { url, handle } = await databaseBefore('0013');
    await query(
      url,
      `INSERT INTO sessions (session_id, client_id, metadata, files, uploaded_at, updated_at, expires_at) VALUES
         ('20260101_020000', 'acme', '{}', '{}', '2026-01-01T02:00:00Z', '2026-01-02T00:00:00Z', '2099-01-01T00:00:00Z');`,
    );
    expect(await migrateToLatest(handle.db)).toEqual(ALL.filter((name) => name >= '0013'));
    await query(
      url,
      `INSERT INTO sessions (session_id, client_id, metadata, files, uploaded_at, updated_at, expires_at) VALUES
         ('20260101_030000', 'acme', '{}', '{}', '2026-01-01T03:00:00Z', '2026-01-01T03:00:00Z', '2099-01-01T00:00:00Z');`,
    );
    expect(
      await query(
        url,
        `SELECT session_id, to_char(scanned_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI') AS scanned, open_findings
         FROM sessions ORDER BY session_id`,
      ),
    ).toEqual([
      { session_id: '20260101_020000', scanned: '2026-01-01T02:00', open_findings: [] },
      { session_id: '20260101_030000', scanned: '2026-01-01T03:00', open_findings: [] },
    ]);
  });

  it('0008 keys agents by (client_id, agent_id) and keeps every agent, command, result and membership', async () => {
    const { url, handle } = await databaseBefore('0008');
    await query(
      url,
      `INSERT INTO agents (agent_id, client_id, license_id, key_tier, version, sent_at, status, uptime_seconds, received_at, first_seen_at) VALUES
         ('svcd_a', 'acme', 'lic_1', 'business', '1', now(), 'running', 1, now(), now()),
         ('svcd_legacy', NULL, NULL, 'msp', '1', now(), 'running', 1, now(), now());
       INSERT INTO agent_commands (id, agent_id, command_type, priority, created_by, status) VALUES
         (1, 'svcd_a', 'restart', 5, 'admin', 'completed'),
         (2, 'svcd_a', 'restart', 5, 'admin', 'pending'),
         (3, 'svcd_legacy', 'restart', 5, 'admin', 'pending');
       INSERT INTO agent_command_results (command_id, exit_code, completed_at) VALUES (1, 0, now());
       INSERT INTO agent_groups (group_name, agent_id) VALUES ('ops', 'svcd_a'), ('ops', 'svcd_legacy');`,
    );
    expect(await migrateToLatest(handle.db)).toEqual(ALL.filter((name) => name >= '0008'));
    expect(await query(url, 'SELECT client_id, agent_id, license_id FROM agents ORDER BY agent_id')).toEqual([
      { client_id: 'acme', agent_id: 'svcd_a', license_id: 'lic_1' },
      { client_id: '', agent_id: 'svcd_legacy', license_id: null },
    ]);
    expect(await query(url, 'SELECT id::int, client_id, agent_id, status FROM agent_commands ORDER BY id')).toEqual([
      { id: 1, client_id: 'acme', agent_id: 'svcd_a', status: 'completed' },
      { id: 2, client_id: 'acme', agent_id: 'svcd_a', status: 'pending' },
      { id: 3, client_id: '', agent_id: 'svcd_legacy', status: 'pending' },
    ]);
    expect(await query(url, 'SELECT command_id::int FROM agent_command_results')).toEqual([{ command_id: 1 }]);
    expect(await query(url, 'SELECT client_id, group_name, agent_id FROM agent_groups ORDER BY agent_id')).toEqual([
      { client_id: 'acme', group_name: 'ops', agent_id: 'svcd_a' },
      { client_id: '', group_name: 'ops', agent_id: 'svcd_legacy' },
    ]);
    // The same id may now exist under another client, and the foreign keys follow the composite key.
    await query(
      url,
      `INSERT INTO agents (agent_id, client_id, license_id, key_tier, version, sent_at, status, uptime_seconds, received_at, first_seen_at) VALUES ('svcd_a', 'globex', 'lic_2', 'msp', '1', now(), 'running', 1, now(), now())`,
    );
    await expect(
      query(
        url,
        `INSERT INTO agent_commands (id, client_id, agent_id, command_type, priority, created_by) VALUES (4, 'initech', 'svcd_a', 'restart', 5, 'admin')`,
      ),
    ).rejects.toThrow(/foreign key/);
    await query(url, `DELETE FROM agents WHERE client_id = 'acme' AND agent_id = 'svcd_a'`);
    expect(await query(url, 'SELECT id::int FROM agent_commands ORDER BY id')).toEqual([{ id: 3 }]);
    expect(await query(url, 'SELECT count(*)::int AS n FROM agent_command_results')).toEqual([{ n: 0 }]);
    expect(await query(url, 'SELECT client_id, agent_id FROM agent_groups')).toEqual([
      { client_id: '', agent_id: 'svcd_legacy' },
    ]);
  });

  it('0007 keys sessions by (client_id, session_id) and keeps every session, token, history row and note', async () => {
    const { url, handle } = await databaseBefore('0007');
    const token = (c: string) => c.repeat(64);
    // What an upload of the time stored: the derived metadata of a real session file.
    const meta = (id: string, client: string | null) =>
      JSON.stringify(
        deriveMetadata({ doc: sessionDoc('session-minimal.json', id), keyClientId: client, hasExecSummary: false }),
      ).replaceAll("'", "''");
    await query(
      url,
      `INSERT INTO sessions (session_id, client_id, client, target, metadata, files, uploaded_at, updated_at, expires_at, status) VALUES
         ('20260101_020000', 'acme', 'Acme', 'acme.example', '${meta('20260101_020000', 'acme')}', '{}', '2026-01-01T02:00:00Z', '2026-01-01T02:00:00Z', '2099-01-01T00:00:00Z', 'in_review'),
         ('20260101_020001', NULL, NULL, 'legacy.example', '${meta('20260101_020001', null)}', '{}', '2026-01-01T02:00:01Z', '2026-01-01T02:00:01Z', '2099-01-01T00:00:00Z', 'new');
       INSERT INTO share_tokens (token, session_id) VALUES ('${token('a')}', '20260101_020000'), ('${token('b')}', '20260101_020001');
       INSERT INTO status_history (session_id, from_status, to_status, changed_by, note) VALUES ('20260101_020000', 'new', 'in_review', 'admin@x', 'looking');
       INSERT INTO session_notes (session_id, author, note) VALUES ('20260101_020000', 'admin@x', 'looking');`,
    );
    expect(await migrateToLatest(handle.db)).toEqual(ALL.filter((name) => name >= '0007'));
    expect(await query(url, 'SELECT client_id, session_id, status FROM sessions ORDER BY session_id')).toEqual([
      { client_id: 'acme', session_id: '20260101_020000', status: 'in_review' },
      { client_id: '', session_id: '20260101_020001', status: 'new' },
    ]);
    expect(await query(url, 'SELECT client_id, session_id, token FROM share_tokens ORDER BY session_id')).toEqual([
      { client_id: 'acme', session_id: '20260101_020000', token: token('a') },
      { client_id: '', session_id: '20260101_020001', token: token('b') },
    ]);
    expect(await query(url, 'SELECT client_id, session_id, to_status FROM status_history')).toEqual([
      { client_id: 'acme', session_id: '20260101_020000', to_status: 'in_review' },
    ]);
    expect(await query(url, 'SELECT client_id, session_id, note FROM session_notes')).toEqual([
      { client_id: 'acme', session_id: '20260101_020000', note: 'looking' },
    ]);

    // The same id under another client is another row now; deleting one session cascades to its rows only.
    await query(
      url,
      `INSERT INTO sessions (session_id, client_id, metadata, files, uploaded_at, updated_at, expires_at) VALUES
         ('20260101_020000', 'other', '{}', '{}', now(), now(), now() + interval '1 day');
       INSERT INTO session_notes (client_id, session_id, author, note) VALUES ('other', '20260101_020000', 'x', 'other note');
       DELETE FROM sessions WHERE client_id = 'other';`,
    );
    expect(await query(url, 'SELECT count(*)::int AS n FROM session_notes')).toEqual([{ n: 1 }]);

    // The portal reads the migrated sessions: the detail with its history, notes and share link, and the share token.
    const portal = await startTestPortal({ databaseUrl: url });
    portals.push(portal);
    const admin = await portal.adminToken();
    const detail = await http(portal.url, 'GET', '/api/sessions?session=20260101_020000', {
      headers: { 'x-identity-token': admin },
    });
    expect(detail.status, detail.text).toBe(200);
    expect(detail.body.session).toMatchObject({
      client_id: 'acme',
      status: 'in_review',
      share_url: `http://portal.test/share/?token=${token('a')}`,
    });
    expect(detail.body.status_history).toHaveLength(1);
    expect(detail.body.notes).toEqual([expect.objectContaining({ note: 'looking' })]);
    const legacy = await http(portal.url, 'GET', '/api/sessions?session=20260101_020001', {
      headers: { 'x-identity-token': admin },
    });
    expect(legacy.body.session).toMatchObject({ client_id: null, session_id: '20260101_020001' });
    expect((await http(portal.url, 'GET', `/api/share?token=${token('b')}`)).body).toMatchObject({
      session_id: '20260101_020001',
      target: 'legacy.example',
    });
  });
});
