import pg from 'pg';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../src/db/pool.ts';
import { clientNames, targetTrends } from '../src/overview/queries.ts';
import { deriveMetadata } from '../src/sessions/derive.ts';
import { createTestDatabase } from '@svc/test-support/portal';

/**
 * The posture's trends and client names per listed target and client (migration 0033's index,
 * one probe each) answer what the window function over every session answered: the newest 10
 * scored sessions of each target by scan time, then session id, oldest first; each client's
 * name from its newest named session. Sessions with ties in scan time, unscored ones, targets
 * of other clients with the same name, and targets with fewer than 10 scored sessions.
 */

const meta = JSON.stringify(
  deriveMetadata({ doc: { metadata: { session_id: 'x' } }, keyClientId: null, hasExecSummary: false }),
);

const WINDOW = `
  SELECT client_id, target, session_id, scanned_at, risk_score, risk_grade FROM (
    SELECT client_id, target, session_id, scanned_at, risk_score, risk_grade,
      row_number() OVER (PARTITION BY client_id, target ORDER BY scanned_at DESC, session_id DESC) AS n
    FROM sessions WHERE target IS NOT NULL AND risk_score IS NOT NULL
  ) s WHERE n <= 10
  ORDER BY client_id, target, scanned_at, session_id`;

describe('overview posture: trends and names per listed target (migration 0033)', () => {
  let handle: DatabaseHandle | undefined;
  let c: pg.Client | undefined;
  afterAll(async () => {
    await c?.end();
    await handle?.close();
  });

  it('equal the window function over every session, and the newest named session', async () => {
    const url = await createTestDatabase({ migrated: true });
    handle = openDatabase(url, { max: 2, logger: pino({ level: 'silent' }) });
    c = new pg.Client({ connectionString: url });
    await c.connect();
    // 3 clients × 3 targets, 0 to 40 sessions each; every 7th unscored; scan times repeat every 5.
    await c.query(
      `INSERT INTO sessions (session_id, client_id, client, target, status, risk_score, risk_grade, metadata, files,
                             uploaded_at, scanned_at, updated_at, expires_at)
       SELECT 's' || lpad(g::text, 4, '0'), 'c' || (g % 3), CASE WHEN g % 4 = 0 THEN NULL ELSE 'Client ' || g END,
              't' || ((g / 3) % 3), 'new', CASE WHEN g % 7 = 0 THEN NULL ELSE (g % 101)::float8 END,
              (ARRAY['A', 'B', 'C'])[1 + g % 3], $1::jsonb, '{}'::jsonb,
              now() - make_interval(mins => g), now() - make_interval(hours => g / 5), now(), now() + interval '90 days'
       FROM generate_series(1, 200) g WHERE NOT (g % 3 = 2 AND (g / 3) % 3 = 2 AND g > 30)`,
      [meta],
    );
    const window = (await c.query(WINDOW)).rows;
    const pairs = (await c.query('SELECT DISTINCT client_id, target FROM sessions ORDER BY 1, 2')).rows;
    expect(pairs).toHaveLength(9);
    const trends = await targetTrends(handle.db, pairs, 10);
    expect(trends).toEqual(window);
    expect(trends.filter((t) => t.client_id === 'c2' && t.target === 't2').length).toBeLessThan(10);
    // Listed in another order, or only some: each target's rows in the order listed.
    const some = [pairs[4], pairs[0]] as { client_id: string; target: string }[];
    const key = (r: { client_id: string; target: string }) => `${r.client_id}/${r.target}`;
    expect(await targetTrends(handle.db, some, 10)).toEqual([
      ...window.filter((r) => key(r) === key(some[0] as (typeof some)[0])),
      ...window.filter((r) => key(r) === key(some[1] as (typeof some)[0])),
    ]);
    expect(await targetTrends(handle.db, [], 10)).toEqual([]);

    const named = await c.query(
      `SELECT DISTINCT ON (client_id) client_id, client FROM sessions WHERE client IS NOT NULL
       ORDER BY client_id, uploaded_at DESC`,
    );
    const names = await clientNames(handle.db, ['c0', 'c1', 'c2', 'nobody']);
    expect(names).toEqual(new Map(named.rows.map((r) => [r.client_id, r.client])));
    expect(names.size).toBe(3);
  });
});
