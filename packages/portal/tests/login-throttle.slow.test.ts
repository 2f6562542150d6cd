import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate.ts';
import type { Database } from '../src/db/schema.ts';
import { FORGET_AFTER_MS, pruneLoginFailures } from '../src/identity/throttle.ts';
import { http } from '@svc/test-support/http';
import { createTestDatabase, startTestPortal, type TestPortal } from '@svc/test-support/portal';

// Failed-login counts per e-mail (login_failures): housekeeping, and what a hostile username does.

describe('pruneLoginFailures', () => {
  let pool: pg.Pool;
  let db: Kysely<Database>;
  const NOW = new Date('2026-11-22T12:00:00.000Z');
  const ago = (ms: number) => new Date(NOW.getTime() - ms);

  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: await createTestDatabase(), max: 2 });
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    await migrateToLatest(db);
  });
  afterAll(() => db.destroy());
  beforeEach(() => pool.query('TRUNCATE login_failures'));

  it('forgets counts nobody added to for a day, but never a lock still running', async () => {
    await db
      .insertInto('login_failures')
      .values([
        {
          address: '127.0.0.1',
          email_normalized: 'old@x.test',
          failed_logins: 3,
          locked_until: null,
          updated_at: ago(FORGET_AFTER_MS + 1),
        },
        {
          address: '127.0.0.1',
          email_normalized: 'old-lock-over@x.test',
          failed_logins: 9,
          locked_until: ago(1),
          updated_at: ago(FORGET_AFTER_MS + 1),
        },
        {
          address: '127.0.0.1',
          email_normalized: 'old-lock-running@x.test',
          failed_logins: 40,
          locked_until: new Date(NOW.getTime() + 60_000),
          updated_at: ago(FORGET_AFTER_MS + 1),
        },
        {
          address: '127.0.0.1',
          email_normalized: 'recent@x.test',
          failed_logins: 2,
          locked_until: null,
          updated_at: ago(FORGET_AFTER_MS - 1),
        },
      ])
      .execute();
    expect(await pruneLoginFailures(db, NOW)).toBe(2);
    const { rows } = await pool.query('SELECT email_normalized FROM login_failures ORDER BY email_normalized');
    expect(rows.map((r) => r.email_normalized)).toEqual(['old-lock-running@x.test', 'recent@x.test']);
  });
});

describe('POST /identity/token with a username PostgreSQL cannot store', () => {
  let portal: TestPortal;
  beforeAll(async () => {
    portal = await startTestPortal();
  });
  afterAll(() => portal.close());

  it('a NUL character or an unpaired surrogate in the username is invalid_grant (400), not a server error, and counts nothing', async () => {
    for (const username of ['admin\u0000@example.test', 'admin\ud800@example.test']) {
      const res = await http(portal.url, 'POST', '/identity/token', {
        json: { grant_type: 'password', username, password: 'wrong-password-000' },
      });
      expect({ username, status: res.status, body: res.body }).toEqual({
        username,
        status: 400,
        body: { error: 'invalid_grant', error_description: 'Invalid username or password' },
      });
    }
  });
});
