/// <reference path="../../../test-support/provided-context.d.ts" />
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import pino from 'pino';
import { describe, expect, inject, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate.ts';
import { openDatabase } from '../src/db/pool.ts';
import { createTestDatabase } from '@svc/test-support/portal';

/**
 * Migration 0030: the listing's search gets trigram indexes when pg_trgm can be installed, and
 * the migration still succeeds (without them) for a portal user who may not install extensions,
 * as on a managed external PostgreSQL; the sort indexes are there either way.
 */

const indexesOf = async (url: string): Promise<string[]> => {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query<{ indexname: string }>(
      "SELECT indexname FROM pg_indexes WHERE tablename = 'sessions' AND (indexname LIKE 'sessions_sort%' OR indexname LIKE 'sessions_search%') ORDER BY 1",
    );
    return r.rows.map((row) => row.indexname);
  } finally {
    await c.end();
  }
};

const SORTS = [
  'sessions_sort_client_idx',
  'sessions_sort_risk_idx',
  'sessions_sort_scanned_idx',
  'sessions_sort_status_idx',
  'sessions_sort_target_idx',
];
const SEARCH = ['sessions_search_client_id_idx', 'sessions_search_client_idx', 'sessions_search_target_idx'];

async function migrate(url: string): Promise<void> {
  const handle = openDatabase(url, { max: 1, logger: pino({ level: 'silent' }) });
  try {
    await migrateToLatest(handle.db);
  } finally {
    await handle.close();
  }
}

describe('migration 0030: search and sort indexes', () => {
  it('with pg_trgm installable: the search indexes and the sort indexes', async () => {
    const url = await createTestDatabase();
    await migrate(url);
    expect(await indexesOf(url)).toEqual([...SEARCH, ...SORTS].sort());
  });

  it('for a user who may not install extensions: migrated all the same, without the search indexes', async () => {
    const url = new URL(await createTestDatabase());
    const admin = new pg.Client({ connectionString: inject('pgAdminUrl') });
    const role = `r_${randomBytes(4).toString('hex')}`;
    const password = randomBytes(12).toString('hex');
    const database = url.pathname.slice(1);
    await admin.connect();
    try {
      await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
      await admin.query(`GRANT CONNECT ON DATABASE ${database} TO ${role}`);
      await admin.query(`REVOKE CREATE ON DATABASE ${database} FROM PUBLIC`);
    } finally {
      await admin.end();
    }
    const inDb = new pg.Client({ connectionString: url.toString() });
    await inDb.connect();
    try {
      await inDb.query(`GRANT USAGE, CREATE ON SCHEMA public TO ${role}`);
    } finally {
      await inDb.end();
    }
    url.username = role;
    url.password = password;
    await migrate(url.toString());
    expect(await indexesOf(url.toString())).toEqual(SORTS);
  });
});
