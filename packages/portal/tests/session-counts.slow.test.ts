import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { migrateTo } from '../src/db/migrate.ts';
import { deriveMetadata } from '../src/sessions/derive.ts';
import { sessionCount } from '../src/sessions/queries.ts';
import { createTestDatabase } from '@svc/test-support/portal';
import { useDatabaseConnections } from '@svc/test-support/portal-db';
import { migrateBefore } from './helpers/migrate-before.ts';

/**
 * Migration 0029: session_counts, the sessions per client and status the listing's total and
 * db-health read instead of counting sessions. It must start right on a database that already
 * has sessions, and stay equal to counting them through every kind of write.
 */

const meta = (id: string) =>
  JSON.stringify(deriveMetadata({ doc: { metadata: { session_id: id } }, keyClientId: null, hasExecSummary: false }));

async function insertSession(c: pg.ClientBase, id: string, clientId: string, status: string): Promise<void> {
  await c.query(
    `INSERT INTO sessions (session_id, client_id, client, target, status, metadata, files, uploaded_at, updated_at, expires_at)
     VALUES ($1, $2, NULL, 't.example', $3, $4::jsonb, '{}', now(), now(), now() + interval '90 days')`,
    [id, clientId, status, meta(id)],
  );
}

/** session_counts without its zero rows, and the same figures counted from sessions. */
async function bothCounts(c: pg.ClientBase) {
  const kept = await c.query(
    'SELECT client_id, status, n::int AS n FROM session_counts WHERE n <> 0 ORDER BY client_id, status',
  );
  const counted = await c.query(
    'SELECT client_id, status, count(*)::int AS n FROM sessions GROUP BY client_id, status ORDER BY client_id, status',
  );
  return { kept: kept.rows, counted: counted.rows };
}

describe('session_counts (migration 0029)', () => {
  const { open, connect } = useDatabaseConnections();

  it('is filled from the sessions already stored, then follows inserts, status and client changes and deletes', async () => {
    const url = await createTestDatabase();
    const handle = open(url);
    await migrateBefore(handle.db, '0029');
    const c = await connect(url);
    await insertSession(c, 's1', 'acme', 'new');
    await insertSession(c, 's2', 'acme', 'new');
    await insertSession(c, 's3', 'acme', 'resolved');
    await insertSession(c, 's1', '', 'in_review');

    expect(await migrateTo(handle.db, '0029_session_counts')).toEqual(['0029_session_counts']);
    expect((await bothCounts(c)).kept).toEqual([
      { client_id: '', status: 'in_review', n: 1 },
      { client_id: 'acme', status: 'new', n: 2 },
      { client_id: 'acme', status: 'resolved', n: 1 },
    ]);

    await insertSession(c, 's4', 'globex', 'new');
    await c.query(`UPDATE sessions SET status = 'archived' WHERE client_id = 'acme' AND session_id = 's2'`);
    await c.query(`UPDATE sessions SET status = status, target = 'u.example' WHERE session_id = 's3'`);
    await c.query(`UPDATE sessions SET client_id = 'globex' WHERE client_id = 'acme' AND session_id = 's1'`);
    await c.query(`DELETE FROM sessions WHERE client_id = '' AND session_id = 's1'`);
    const after = await bothCounts(c);
    expect(after.kept).toEqual(after.counted);
    expect(after.kept).toEqual([
      { client_id: 'acme', status: 'archived', n: 1 },
      { client_id: 'acme', status: 'resolved', n: 1 },
      { client_id: 'globex', status: 'new', n: 2 },
    ]);

    // The listing's total from the counts, by the filters they answer.
    const none = { clientId: undefined, status: undefined, target: undefined, search: undefined };
    const dates = { uploadedFrom: undefined, uploadedTo: undefined };
    expect(await sessionCount(handle.db, { ...none, ...dates, clientIds: null })).toBe(4);
    expect(await sessionCount(handle.db, { ...none, ...dates, clientIds: ['globex'] })).toBe(2);
    expect(await sessionCount(handle.db, { ...none, ...dates, clientIds: null, status: 'new' })).toBe(2);
    expect(await sessionCount(handle.db, { ...none, ...dates, clientIds: null, clientId: 'acme', status: 'new' })).toBe(
      0,
    );
    // A filter the counts do not hold counts the sessions.
    expect(await sessionCount(handle.db, { ...none, ...dates, clientIds: null, target: 'u.example' })).toBe(1);
  });

  it('opposite status changes of one client in concurrent transactions neither deadlock nor lose a count', async () => {
    const url = await createTestDatabase({ migrated: true });
    const setup = await connect(url);
    for (let i = 0; i < 20; i++) await insertSession(setup, `p${i}`, 'acme', i % 2 === 0 ? 'new' : 'resolved');
    const a = await connect(url);
    const b = await connect(url);
    // Each transaction moves its sessions one way: new → resolved against resolved → new, interleaved.
    const run = async (c: pg.Client, from: number) => {
      await c.query('BEGIN');
      for (let i = from; i < 20; i += 2)
        await c.query(
          `UPDATE sessions SET status = CASE status WHEN 'new' THEN 'resolved' ELSE 'new' END WHERE session_id = $1`,
          [`p${i}`],
        );
      await c.query('COMMIT');
    };
    await Promise.all([run(a, 0), run(b, 1)]);
    const counts = await bothCounts(setup);
    expect(counts.kept).toEqual(counts.counted);
    expect(counts.kept).toEqual([
      { client_id: 'acme', status: 'new', n: 10 },
      { client_id: 'acme', status: 'resolved', n: 10 },
    ]);
  });
});
