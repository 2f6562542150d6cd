import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate.ts';
import { openDatabase, type DatabaseHandle } from '../src/db/pool.ts';
import { createTestDatabase } from '@svc/test-support/portal';
import { migrateBefore } from './helpers/migrate-before.ts';

/**
 * Migration 0044 on a database an earlier version left: the target rows that a latest-state
 * question or a refused upload made (no record, no session of the target) go; a target with
 * records, or with a session and no records, stays.
 */

let handle: DatabaseHandle;
afterAll(() => handle?.close());

describe('migration 0044_finding_targets_without_records', () => {
  it('removes the target rows no record and no session names, and only those', async () => {
    handle = openDatabase(await createTestDatabase(), { max: 2, logger: pino({ level: 'silent' }) });
    await migrateBefore(handle.db, '0044_finding_targets_without_records');
    const q = (text: string, values: unknown[] = []) => handle.pool.query(text, values).then((r) => r.rows);
    await q(`INSERT INTO finding_targets (client_id, target, seeded_at) VALUES
      ('acme', 'asked.example', now()), ('acme', 'with-records', now()), ('acme', 'with-session', now()),
      ('acme', '', now()), ('beta', 'with-session', now())`);
    await q(`INSERT INTO finding_records (client_id, target, fingerprint, title, severity_key, status, status_source,
               first_seen, first_seen_at, last_seen, last_seen_at, last_observed_at)
             VALUES ('acme', 'with-records', 'f1', 'Telnet open', 3, 'new', 'scan',
               's1', now(), 's1', now(), now())`);
    // A session's target is compared as records name it: trimmed, none as ''.
    await q(`INSERT INTO sessions (session_id, client_id, target, metadata, files, uploaded_at, updated_at, expires_at)
             VALUES ('s2', 'acme', ' with-session ', '{}', '{}', now(), now(), now() + interval '1 day'),
                    ('s3', 'acme', NULL, '{}', '{}', now(), now(), now() + interval '1 day')`);

    await migrateToLatest(handle.db);
    expect(await q('SELECT client_id, target FROM finding_targets ORDER BY 1, 2')).toEqual([
      { client_id: 'acme', target: '' },
      { client_id: 'acme', target: 'with-records' },
      { client_id: 'acme', target: 'with-session' },
    ]);
    expect(await q('SELECT count(*)::int AS n FROM finding_records')).toEqual([{ n: 1 }]);
  });
});
