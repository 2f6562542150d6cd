import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { AuditEventType } from '@svc/protocol';
import { closeAuditHours, pruneAuditEvents, selectAuditEvents } from '../src/audit/queries.ts';
import { migrateTo } from '../src/db/migrate.ts';
import type { DatabaseHandle } from '../src/db/pool.ts';
import { tableCounts } from '../src/operations/queries.ts';
import { createTestDatabase } from '@svc/test-support/portal';
import { useDatabaseConnections } from '@svc/test-support/portal-db';
import { until } from '@svc/test-support/wait';
import { migrateBefore } from './helpers/migrate-before.ts';

/**
 * Migration 0032: the audit log's closed hours counted once and kept. The audit total of every
 * window (alone or with a type) and db-health's count of every event must equal counting the
 * events, through inserts on both sides of an hour's end and of the window's edge, writes into
 * hours already closed, deletes (the 90-day purge), updates, truncation, closing after a pause,
 * and a writer racing the closer. The database's clock is the one clock: events are placed
 * relative to its now() and its current hour; a pause of the closer is the state it leaves (the
 * last closed hour moved back).
 */

const TYPES: AuditEventType[] = ['scan_completed', 'status_changed', 'license_created'];
/** The hour of an SQL time, as migration 0032's audit_hour() has it (usable before the migration too). */
const hourOf = (at: string) => `date_bin('1 hour', ${at}, TIMESTAMPTZ '2000-01-01 00:00:00+00')`;
const HOUR = hourOf('now()');

/** Events around every edge the counts have: the current hour's start, the window's edges, the purge's. */
const EDGES = [
  'now()',
  HOUR,
  `${HOUR} - interval '1 microsecond'`,
  `${HOUR} - interval '5 hours'`,
  `${HOUR} - interval '5 hours 1 microsecond'`,
  `${hourOf("now() - interval '30 days'")} + interval '1 hour'`,
  `${hourOf("now() - interval '30 days'")} + interval '59 minutes 59.999999 seconds'`,
  `now() - interval '30 days' + interval '1 minute'`,
  `now() - interval '30 days' - interval '1 minute'`,
  `now() - interval '89 days'`,
  `now() - interval '90 days' + interval '1 minute'`,
  `now() - interval '90 days' - interval '30 minutes'`,
  `now() - interval '91 days'`,
];

async function plant(c: pg.ClientBase, at: string, type = 'scan_completed', n = 1): Promise<void> {
  await c.query(
    `INSERT INTO audit_events (event_type, actor, created_at) SELECT $1, 'planted', ${at} FROM generate_series(1, $2)`,
    [type, n],
  );
}

async function plantEdges(c: pg.ClientBase): Promise<void> {
  for (const [i, at] of EDGES.entries()) await plant(c, at, TYPES[i % TYPES.length], 1 + (i % 3));
}

/** The kept counts equal counting the closed hours' events; every total equals a plain count. */
async function expectExact(c: pg.ClientBase, db: DatabaseHandle['db']): Promise<void> {
  const closed = 'created_at < (SELECT until FROM audit_event_hours_closed)';
  const byType = await c.query('SELECT event_type, hour, n::int AS n FROM audit_event_type_hours ORDER BY 1, 2');
  const countedByType = await c.query(
    `SELECT event_type, audit_hour(created_at) AS hour, count(*)::int AS n FROM audit_events WHERE ${closed}
     GROUP BY 1, 2 ORDER BY 1, 2`,
  );
  expect(byType.rows).toEqual(countedByType.rows);
  const byHour = await c.query('SELECT hour, n::int AS n FROM audit_event_hours ORDER BY 1');
  const countedByHour = await c.query(
    `SELECT audit_hour(created_at) AS hour, count(*)::int AS n FROM audit_events WHERE ${closed} GROUP BY 1 ORDER BY 1`,
  );
  expect(byHour.rows).toEqual(countedByHour.rows);
  for (const days of [1, 30, 89, 90])
    for (const type of [undefined, ...TYPES]) {
      const { total } = await selectAuditEvents(db, { days, type, clientIds: null, limit: 1 });
      const { rows } = await c.query(
        `SELECT count(*)::int AS n FROM audit_events
         WHERE created_at >= now() - make_interval(days => $1) AND ($2::text IS NULL OR event_type = $2)`,
        [days, type ?? null],
      );
      expect(total, `${days} days, type ${type}`).toBe(rows[0].n);
    }
  const all = await c.query('SELECT count(*)::int AS n FROM audit_events');
  expect((await tableCounts(db)).audit_events).toBe(all.rows[0].n);
}

/** The state a closer leaves when it last ran `hours` ago. */
async function pauseCloser(c: pg.ClientBase, hours: number): Promise<void> {
  await c.query(`UPDATE audit_event_hours_closed SET until = until - make_interval(hours => $1)`, [hours]);
  await c.query('DELETE FROM audit_event_type_hours WHERE hour >= (SELECT until FROM audit_event_hours_closed)');
  await c.query('DELETE FROM audit_event_hours WHERE hour >= (SELECT until FROM audit_event_hours_closed)');
}

const keptRows = async (c: pg.ClientBase) =>
  (await c.query('SELECT count(*)::int AS n FROM audit_event_type_hours')).rows[0].n as number;

describe('audit event hours (migration 0032)', () => {
  const { open, connect } = useDatabaseConnections();

  it('is filled from the events already stored: every hour before the current one closed', async () => {
    const url = await createTestDatabase();
    const handle = open(url);
    await migrateBefore(handle.db, '0032');
    const c = await connect(url);
    await plantEdges(c);
    expect(await migrateTo(handle.db, '0032_audit_event_hours')).toEqual(['0032_audit_event_hours']);
    const state = await c.query(
      `SELECT until <= ${HOUR} AND until >= ${HOUR} - interval '1 hour' AS current FROM audit_event_hours_closed`,
    );
    expect(state.rows).toEqual([{ current: true }]);
    expect(await keptRows(c)).toBeGreaterThan(5);
    await expectExact(c, handle.db);
  });

  it('stays exact through inserts, late writes into closed hours, updates, the purge, a pause and truncation', async () => {
    const url = await createTestDatabase({ migrated: true });
    const handle = open(url);
    const c = await connect(url);
    // Nothing closed yet: everything is counted live.
    await plantEdges(c);
    expect((await c.query('SELECT * FROM audit_event_hours_closed')).rowCount).toBe(0);
    await expectExact(c, handle.db);
    expect(await closeAuditHours(handle.db)).toBeGreaterThan(0);
    expect(await closeAuditHours(handle.db)).toBe(0);
    expect(await keptRows(c)).toBeGreaterThan(5);
    await expectExact(c, handle.db);

    // Writes into closed hours (a transaction that began before the hour ended; an import) and the open one.
    await plant(c, `${HOUR} - interval '1 microsecond'`, 'status_changed', 3);
    await plant(c, `${HOUR} - interval '40 days'`, 'license_created', 2);
    await plant(c, 'now()', 'scan_completed', 4);
    await expectExact(c, handle.db);
    await c.query(`DELETE FROM audit_events WHERE id IN (SELECT id FROM audit_events
                   WHERE created_at = ${HOUR} - interval '5 hours' LIMIT 1)`);
    await c.query(`UPDATE audit_events SET created_at = now() WHERE created_at = now() - interval '89 days'`);
    await c.query(`UPDATE audit_events SET event_type = 'status_changed' WHERE event_type = 'license_created'`);
    await c.query(`UPDATE audit_events SET data = '{"x": 1}'`);
    await expectExact(c, handle.db);

    // The purge deletes at the window's edge; hours left with no event keep no row.
    expect(await pruneAuditEvents(handle.db)).toBe(4);
    await expectExact(c, handle.db);
    expect((await c.query('SELECT 1 FROM audit_event_type_hours WHERE n <= 0')).rowCount).toBe(0);
    expect((await c.query('SELECT 1 FROM audit_event_hours WHERE n <= 0')).rowCount).toBe(0);

    // The closer last ran 6 hours ago: those hours are counted live, then closed.
    await pauseCloser(c, 6);
    for (let h = 1; h <= 6; h++) await plant(c, `${HOUR} - make_interval(hours => ${h}) + interval '30 minutes'`);
    await expectExact(c, handle.db);
    expect(await closeAuditHours(handle.db)).toBe(6);
    await expectExact(c, handle.db);

    await c.query('TRUNCATE audit_events');
    expect(await keptRows(c)).toBe(0);
    await plantEdges(c);
    await expectExact(c, handle.db);
  });

  it('a writer into an hour being closed is counted once, whichever takes the hour first', async () => {
    const url = await createTestDatabase({ migrated: true });
    const handle = open(url);
    const c = await connect(url);
    const writer = await connect(url);
    const closer = await connect(url);
    await plantEdges(c);
    await closeAuditHours(handle.db);
    const waiting = async () =>
      (await c.query(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`)).rowCount === 1;

    // The writer holds the hour: the closer waits for its commit, then counts its event.
    await pauseCloser(c, 2);
    await writer.query('BEGIN');
    await plant(writer, `${HOUR} - interval '90 minutes'`, 'status_changed', 2);
    const closing = closer.query('SELECT audit_event_hours_close(24) AS n');
    await until(waiting, 20_000, () => 'the closer waiting for the writer');
    await writer.query('COMMIT');
    expect((await closing).rows).toEqual([{ n: 2 }]);
    await expectExact(c, handle.db);

    // The closer holds the hour: the writer waits for its commit, then adds its event to the hour.
    await pauseCloser(c, 2);
    await closer.query('BEGIN');
    expect((await closer.query('SELECT audit_event_hours_close(24) AS n')).rows).toEqual([{ n: 2 }]);
    const writing = plant(writer, `${HOUR} - interval '90 minutes'`, 'status_changed', 5);
    await until(waiting, 20_000, () => 'the writer waiting for the closer');
    await closer.query('COMMIT');
    await writing;
    await expectExact(c, handle.db);

    // A second closer while one is at work leaves it to that one.
    await pauseCloser(c, 1);
    await closer.query('BEGIN');
    expect((await closer.query('SELECT audit_event_hours_close(24) AS n')).rows).toEqual([{ n: 1 }]);
    expect(await closeAuditHours(handle.db)).toBe(0);
    await closer.query('COMMIT');
    await expectExact(c, handle.db);
  });

  it('refuses a write into a past hour in a transaction that would not see a closer commit', async () => {
    const url = await createTestDatabase({ migrated: true });
    const handle = open(url);
    const c = await connect(url);
    await closeAuditHours(handle.db);
    await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    await expect(plant(c, `${HOUR} - interval '2 hours'`)).rejects.toThrow(
      'audit events are written in READ COMMITTED transactions only (their hourly counts rely on it)',
    );
    await c.query('ROLLBACK');
    // The current hour (here a later one) needs no closed hour's count: any isolation writes it.
    await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    await plant(c, `now() + interval '1 hour'`);
    await c.query('COMMIT');
    await expectExact(c, handle.db);
  });
});
