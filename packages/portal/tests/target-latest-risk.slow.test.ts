import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { migrateTo } from '../src/db/migrate.ts';
import { deriveMetadata } from '../src/sessions/derive.ts';
import { createTestDatabase } from '@svc/test-support/portal';
import { useDatabaseConnections } from '@svc/test-support/portal-db';

/**
 * Migration 0035: target_latest_risk, each target's newest scored session, which the overview's
 * risk chart ranks targets by. It must start right on a database that already has sessions, and
 * stay equal to reading the sessions through every kind of write, from one connection or two.
 */

const meta = (id: string) =>
  JSON.stringify(deriveMetadata({ doc: { metadata: { session_id: id } }, keyClientId: null, hasExecSummary: false }));

interface Scan {
  id: string;
  client?: string;
  target?: string | null;
  /** Days before 2026-11-01. */
  daysAgo: number;
  score: number | null;
}

async function insertScan(c: pg.ClientBase, s: Scan): Promise<void> {
  await c.query(
    `INSERT INTO sessions (session_id, client_id, client, target, metadata, files, uploaded_at, updated_at, expires_at,
                           scanned_at, risk_score)
     VALUES ($1, $2, NULL, $3, $4::jsonb, '{}', now(), now(), now() + interval '90 days',
             timestamptz '2026-11-01T00:00:00Z' - make_interval(days => $5), $6)`,
    [s.id, s.client ?? 'acme', s.target === undefined ? 't.example' : s.target, meta(s.id), s.daysAgo, s.score],
  );
}

/** The kept rows, and the same read from sessions: per (client, target) its newest scored session. */
async function bothLatest(c: pg.ClientBase) {
  const order = 'ORDER BY client_id, target NULLS LAST';
  const kept = await c.query(`SELECT client_id, target, session_id, risk_score FROM target_latest_risk ${order}`);
  const read = await c.query(
    `SELECT * FROM (SELECT DISTINCT ON (client_id, target) client_id, target, session_id, risk_score FROM sessions
       WHERE risk_score IS NOT NULL ORDER BY client_id, target, scanned_at DESC, session_id DESC) x ${order}`,
  );
  return { kept: kept.rows, read: read.rows };
}

describe('target_latest_risk (migration 0035)', () => {
  const { open, connect } = useDatabaseConnections();

  it('is filled from the sessions already stored, then follows every write to a scan', async () => {
    const url = await createTestDatabase();
    const handle = open(url);
    await migrateTo(handle.db, '0034_finding_records_fillfactor');
    const c = await connect(url);
    await insertScan(c, { id: 'a1', daysAgo: 9, score: 40 });
    await insertScan(c, { id: 'a2', daysAgo: 3, score: 10 });
    await insertScan(c, { id: 'a3', daysAgo: 1, score: null });
    await insertScan(c, { id: 'n1', target: null, daysAgo: 5, score: 70 });
    await insertScan(c, { id: 'g1', client: 'globex', daysAgo: 2, score: 55 });

    expect(await migrateTo(handle.db, '0035_target_latest_risk')).toEqual(['0035_target_latest_risk']);
    const start = await bothLatest(c);
    expect(start.kept).toEqual([
      { client_id: 'acme', target: 't.example', session_id: 'a2', risk_score: 10 },
      { client_id: 'acme', target: null, session_id: 'n1', risk_score: 70 },
      { client_id: 'globex', target: 't.example', session_id: 'g1', risk_score: 55 },
    ]);

    const steps: [string, () => Promise<unknown>][] = [
      ['an older scan changes nothing', () => insertScan(c, { id: 'a0', daysAgo: 20, score: 99 })],
      ['a newer scan replaces the row', () => insertScan(c, { id: 'a4', daysAgo: 0, score: 30 })],
      ['the same scan time: the greater session id', () => insertScan(c, { id: 'a5', daysAgo: 0, score: 35 })],
      ['a second target of no name', () => insertScan(c, { id: 'n2', target: null, daysAgo: 4, score: 20 })],
      ['the newest is rescored', () => c.query(`UPDATE sessions SET risk_score = 80 WHERE session_id = 'a5'`)],
      ['an older one is rescored', () => c.query(`UPDATE sessions SET risk_score = 5 WHERE session_id = 'a1'`)],
      ['the newest loses its score', () => c.query(`UPDATE sessions SET risk_score = NULL WHERE session_id = 'a5'`)],
      ['an unscored scan gains one', () => c.query(`UPDATE sessions SET risk_score = 60 WHERE session_id = 'a3'`)],
      [
        'the newest moves to another target',
        () => c.query(`UPDATE sessions SET target = 'u.example' WHERE session_id = 'a4'`),
      ],
      [
        'an older one becomes the newest',
        () => c.query(`UPDATE sessions SET scanned_at = '2026-11-02' WHERE session_id = 'a0'`),
      ],
      [
        'the newest of no target moves client',
        () => c.query(`UPDATE sessions SET client_id = 'globex' WHERE session_id = 'n2'`),
      ],
      ['the newest is deleted', () => c.query(`DELETE FROM sessions WHERE session_id = 'a0'`)],
      ['a target loses its last scan', () => c.query(`DELETE FROM sessions WHERE session_id = 'g1'`)],
      [
        'inserted, rescored and deleted in one transaction',
        async () => {
          await c.query('BEGIN');
          await insertScan(c, { id: 'x1', client: 'initech', daysAgo: 0, score: 50 });
          await insertScan(c, { id: 'x2', client: 'initech', daysAgo: 1, score: 45 });
          await c.query(`UPDATE sessions SET risk_score = 51 WHERE session_id = 'x1'`);
          await c.query(`DELETE FROM sessions WHERE session_id = 'x1'`);
          await c.query('COMMIT');
        },
      ],
    ];
    for (const [what, step] of steps) {
      await step();
      const now = await bothLatest(c);
      expect(now.kept, what).toEqual(now.read);
    }
    expect((await bothLatest(c)).kept).toEqual([
      { client_id: 'acme', target: 't.example', session_id: 'a3', risk_score: 60 },
      { client_id: 'acme', target: 'u.example', session_id: 'a4', risk_score: 30 },
      { client_id: 'acme', target: null, session_id: 'n1', risk_score: 70 },
      { client_id: 'globex', target: null, session_id: 'n2', risk_score: 20 },
      { client_id: 'initech', target: 't.example', session_id: 'x2', risk_score: 45 },
    ]);
  });

  it('a newer scan written beside the deletion of the newest is kept, whichever goes first', async () => {
    const url = await createTestDatabase({ migrated: true });
    const setup = await connect(url);
    const a = await connect(url);
    const b = await connect(url);
    const remove = (c: pg.Client) => c.query(`DELETE FROM sessions WHERE session_id = 'top'`);
    const add = (c: pg.Client) => insertScan(c, { id: 'new', daysAgo: 0, score: 30 });
    // One client's writes to sessions wait on each other (its storage_usage row), so the second
    // statement waits for the first transaction's commit, where the triggers run.
    for (const [first, second] of [
      [remove, add],
      [add, remove],
    ] as const) {
      await setup.query('DELETE FROM sessions');
      await insertScan(setup, { id: 'old', daysAgo: 5, score: 10 });
      await insertScan(setup, { id: 'top', daysAgo: 2, score: 20 });
      await a.query('BEGIN');
      await b.query('BEGIN');
      await first(a);
      const waiting = second(b);
      await a.query('COMMIT');
      await waiting;
      await b.query('COMMIT');
      const now = await bothLatest(setup);
      expect(now.kept).toEqual([{ client_id: 'acme', target: 't.example', session_id: 'new', risk_score: 30 }]);
      expect(now.kept).toEqual(now.read);
    }
  });
});
