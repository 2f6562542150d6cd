import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate.ts';
import { openDatabase, type DatabaseHandle } from '../src/db/pool.ts';
import { DETAIL_PAGE } from '../src/sessions/detail-pages.ts';
import { createTestDatabase } from '@svc/test-support/portal';
import { migrateBefore } from './helpers/migrate-before.ts';

/**
 * Migration 0040 on a database an earlier version left: every finding's detail moves into the
 * pages of its session (a JSON object per 100 positions), stored uncompressed, and the table of
 * one detail per row is left empty; deleting a state row still takes both kinds with it.
 */

let handle: DatabaseHandle;
afterAll(() => handle?.close());

describe('migration 0040_finding_detail_pages', () => {
  it('moves each detail to the page of its position and keeps the cascade of the state row', async () => {
    handle = openDatabase(await createTestDatabase(), { max: 2, logger: pino({ level: 'silent' }) });
    await migrateBefore(handle.db, '0040_finding_detail_pages');
    const q = (text: string, values: unknown[] = []) => handle.pool.query(text, values).then((r) => r.rows);
    // Session acme/s1: positions 0 to 249 but 7 (not an object in its file); beta/s1 one finding.
    const ordinals = Array.from({ length: 250 }, (_v, i) => i).filter((i) => i !== 7);
    await q(
      `INSERT INTO session_finding_details (client_id, session_id, ordinal, detail)
       SELECT 'acme', 's1', o, jsonb_build_object('id', 'f' || o, 'evidence', 'line "' || o || '"')
       FROM unnest($1::int[]) AS o`,
      [ordinals],
    );
    await q(`INSERT INTO session_finding_details VALUES ('beta', 's1', 0, '{"id": "b0"}')`);

    await migrateToLatest(handle.db);
    expect(DETAIL_PAGE).toBe(100);
    const pages = await q(
      'SELECT client_id, session_id, page, details FROM session_finding_detail_pages ORDER BY 1, 2, 3',
    );
    expect(pages.map((p) => [p.client_id, p.session_id, p.page])).toEqual([
      ['acme', 's1', 0],
      ['acme', 's1', 1],
      ['acme', 's1', 2],
      ['beta', 's1', 0],
    ]);
    const first = JSON.parse(pages[0].details) as Record<string, unknown>;
    expect(Object.keys(first)).toHaveLength(99);
    expect(first['7']).toBeUndefined();
    expect(first['42']).toEqual({ id: 'f42', evidence: 'line "42"' });
    expect(Object.keys(JSON.parse(pages[2].details))).toEqual(ordinals.filter((o) => o >= 200).map(String));
    expect(JSON.parse(pages[3].details)).toEqual({ 0: { id: 'b0' } });
    expect(await q('SELECT count(*)::int AS n FROM session_finding_details')).toEqual([{ n: 0 }]);
    expect(
      await q(`SELECT attstorage FROM pg_attribute
               WHERE attrelid = 'session_finding_detail_pages'::regclass AND attname = 'details'`),
    ).toEqual([{ attstorage: 'e' }]);

    // The state row's deletion takes its pages and any detail a replica of the earlier version wrote.
    await q(`INSERT INTO sessions (session_id, client_id, metadata, files, uploaded_at, updated_at, expires_at)
             VALUES ('s1', 'acme', '{}', '{}', now(), now(), now() + interval '1 day')`);
    await q(
      `INSERT INTO session_findings_state (client_id, session_id, file_key, total) VALUES ('acme', 's1', 'k', 249)`,
    );
    await q(`INSERT INTO session_finding_details VALUES ('acme', 's1', 300, '{}')`);
    await q(`DELETE FROM session_findings_state WHERE client_id = 'acme'`);
    expect(await q('SELECT client_id, page FROM session_finding_detail_pages')).toEqual([
      { client_id: 'beta', page: 0 },
    ]);
    expect(await q('SELECT count(*)::int AS n FROM session_finding_details')).toEqual([{ n: 0 }]);
  });
});
