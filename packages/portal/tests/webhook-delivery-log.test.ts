import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate.ts';
import type { Database } from '../src/db/schema.ts';
import { DeliveryLog, type FinishedDelivery } from '../src/webhooks/delivery-log.ts';
import type { DeliveryRow } from '../src/webhooks/present.ts';
import { createTestDatabase } from './helpers/portal.ts';

// The delivery log's batched writes against a real database: what one fan-out stores, how
// many statements it takes, and that one bad entry never loses the others' log.
let pool: pg.Pool;
let db: Kysely<Database>;
let statements: string[] = [];
let log: DeliveryLog;
const AT = new Date('2026-11-22T10:00:00.000Z');

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: await createTestDatabase(), max: 4 });
  db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    // Every statement sent, whether it succeeded ('query') or failed ('error').
    log: (event) => void statements.push(event.query.sql),
  });
  await migrateToLatest(db);
  log = new DeliveryLog(db, pino({ level: 'silent' }));
});

afterAll(async () => {
  await db.destroy();
});

let subs: string[];
beforeEach(async () => {
  await pool.query('TRUNCATE webhook_subscriptions CASCADE');
  subs = Array.from({ length: 50 }, (_, i) => `whsub_${String(i).padStart(12, '0')}`);
  await pool.query(
    `INSERT INTO webhook_subscriptions (id, url, event_types, signing_secret, created_by, consecutive_failures)
     SELECT id, 'https://receiver.test/' || id, '{status_changed}', 'secret', 'admin@test.local', 3 FROM unnest($1::text[]) AS id`,
    [subs],
  );
  statements = [];
});

const openFanOut = (ids: string[]): Promise<DeliveryRow[]> =>
  log.open(ids.map((id) => ({ subscription_id: id, event_id: 'evt_00112233aabbccdd', event_type: 'status_changed', body: '{"a":1}', redelivery_of: null })), AT);

function finished(d: DeliveryRow, ok: boolean, tries = ok ? 1 : 2): FinishedDelivery {
  const attempts = Array.from({ length: tries }, (_, i) => ({
    delivery_id: d.id,
    attempt: i + 1,
    status_code: ok && i === tries - 1 ? 200 : null,
    duration_ms: 7 + i,
    error: ok && i === tries - 1 ? null : 'timeout after 5 s',
    attempted_at: new Date(AT.getTime() + i * 5_500),
  }));
  return { deliveryId: d.id, status: ok ? 'succeeded' : 'failed', attempts, resetSubscription: ok ? d.subscription_id : null };
}

describe('DeliveryLog', () => {
  it('opens a fan-out with one INSERT: pending rows in the order given', async () => {
    const reversed = [...subs].reverse();
    const rows = await openFanOut(reversed);
    expect(statements).toHaveLength(1);
    expect(rows.map((r) => r.subscription_id)).toEqual(reversed);
    expect(rows.every((r) => r.status === 'pending' && r.created_at.getTime() === AT.getTime())).toBe(true);
    const { rows: stored } = await pool.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending'`);
    expect(stored[0].n).toBe(50);
  });

  it('finishes 50 deliveries in one statement: attempts, final status and the end of each success streak', async () => {
    const rows = await openFanOut(subs);
    statements = [];
    await Promise.all(rows.map((d, i) => log.finish(finished(d, i % 10 !== 0))));
    expect(statements).toHaveLength(1);

    const { rows: deliveries } = await pool.query('SELECT id, subscription_id, status FROM webhook_deliveries ORDER BY id');
    expect(deliveries.map((d) => d.status)).toEqual(rows.map((_, i) => (i % 10 === 0 ? 'failed' : 'succeeded')));
    const { rows: attempts } = await pool.query('SELECT delivery_id, attempt, status_code, duration_ms, error, attempted_at FROM webhook_delivery_attempts ORDER BY delivery_id, attempt');
    expect(attempts).toHaveLength(45 + 5 * 2);
    expect(attempts[0]).toEqual({ delivery_id: rows[0]!.id, attempt: 1, status_code: null, duration_ms: 7, error: 'timeout after 5 s', attempted_at: AT });
    expect(attempts[1]).toEqual({ delivery_id: rows[0]!.id, attempt: 2, status_code: null, duration_ms: 8, error: 'timeout after 5 s', attempted_at: new Date(AT.getTime() + 5_500) });
    expect(attempts[2]).toEqual({ delivery_id: rows[1]!.id, attempt: 1, status_code: 200, duration_ms: 7, error: null, attempted_at: AT });
    // Successful subscriptions start a new streak; failed ones keep theirs (the dispatcher counts failures itself).
    const { rows: streaks } = await pool.query('SELECT id, consecutive_failures FROM webhook_subscriptions ORDER BY id');
    expect(streaks.map((s) => s.consecutive_failures)).toEqual(subs.map((_, i) => (i % 10 === 0 ? 3 : 0)));
  });

  it('what finishes while a batch is being written goes into the next batch', async () => {
    const rows = await openFanOut(subs);
    statements = [];
    const first = rows.slice(0, 10).map((d) => log.finish(finished(d, true)));
    // The first batch is on its way once this turn of the event loop ends.
    await new Promise((resolve) => setImmediate(resolve));
    const second = rows.slice(10).map((d) => log.finish(finished(d, true)));
    await Promise.all([...first, ...second]);
    expect(statements).toHaveLength(2);
    const { rows: done } = await pool.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'succeeded'`);
    expect(done[0].n).toBe(50);
  });

  it('a subscription deleted mid-delivery (its rows gone with it) does not fail the batch', async () => {
    const rows = await openFanOut(subs.slice(0, 3));
    await pool.query('DELETE FROM webhook_subscriptions WHERE id = $1', [subs[1]]);
    statements = [];
    await Promise.all(rows.map((d) => log.finish(finished(d, true))));
    expect(statements).toHaveLength(1);
    const { rows: left } = await pool.query('SELECT subscription_id, status FROM webhook_deliveries ORDER BY id');
    expect(left).toEqual([
      { subscription_id: subs[0], status: 'succeeded' },
      { subscription_id: subs[2], status: 'succeeded' },
    ]);
    const { rows: attempts } = await pool.query('SELECT count(*)::int AS n FROM webhook_delivery_attempts');
    expect(attempts[0].n).toBe(2);
  });

  it('one entry the database refuses fails alone: the batch is rewritten entry by entry', async () => {
    const rows = await openFanOut(subs.slice(0, 4));
    statements = [];
    // A repeated attempt number violates the attempts table's primary key.
    const bad = finished(rows[2]!, true);
    bad.attempts.push({ ...bad.attempts[0]! });
    const results = await Promise.allSettled([log.finish(finished(rows[0]!, true)), log.finish(finished(rows[1]!, false)), log.finish(bad), log.finish(finished(rows[3]!, true))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(String((results[2] as PromiseRejectedResult).reason)).toMatch(/duplicate key/);
    expect(statements).toHaveLength(1 + 4);
    const { rows: stored } = await pool.query('SELECT status FROM webhook_deliveries ORDER BY id');
    expect(stored.map((d) => d.status)).toEqual(['succeeded', 'failed', 'pending', 'succeeded']);
    const { rows: attempts } = await pool.query('SELECT delivery_id FROM webhook_delivery_attempts ORDER BY delivery_id, attempt');
    expect(attempts.map((a) => a.delivery_id)).toEqual([rows[0]!.id, rows[1]!.id, rows[1]!.id, rows[3]!.id]);
  });
});
