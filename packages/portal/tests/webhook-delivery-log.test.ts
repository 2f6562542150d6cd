import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate.ts';
import type { Database } from '../src/db/schema.ts';
import { DeliveryLog, streakChanges, type FinishedDelivery } from '../src/webhooks/delivery-log.ts';
import type { OutboxClaim } from '../src/webhooks/outbox-queries.ts';
import { selectSubscribers } from '../src/webhooks/queries.ts';
import type { DeliveryRow } from '../src/webhooks/present.ts';
import { createTestDatabase } from '@svc/test-support/portal';

// The delivery log's batched writes against a real database: what one fan-out stores, how
// many statements it takes, failure streaks and automatic disabling, and that one bad entry
// never loses the others' log.
let pool: pg.Pool;
let db: Kysely<Database>;
let statements: string[] = [];
let log: DeliveryLog;
const AT = new Date('2026-11-22T10:00:00.000Z');
const NOW = new Date('2026-11-22T10:00:11.000Z');
const LIMIT = 5;
const OWNER = 'replica-a:1:00000000';

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: await createTestDatabase(), max: 4 });
  db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    // Every statement sent, whether it succeeded ('query') or failed ('error').
    log: (event) => void statements.push(event.query.sql),
  });
  await migrateToLatest(db);
  log = new DeliveryLog({
    db,
    logger: pino({ level: 'silent' }),
    disableAfterFailures: LIMIT,
    now: () => NOW,
    lease: { owner: OWNER, seconds: 60 },
  });
});

afterAll(async () => {
  await db.destroy();
});

let subs: string[];
beforeEach(async () => {
  await pool.query('TRUNCATE webhook_subscriptions, webhook_outbox CASCADE');
  subs = Array.from({ length: 50 }, (_, i) => `whsub_${String(i).padStart(12, '0')}`);
  await pool.query(
    `INSERT INTO webhook_subscriptions (id, url, event_types, signing_secret, created_by, consecutive_failures)
     SELECT id, 'https://receiver.test/' || id, '{status_changed}', 'secret', 'admin@test.local', 3 FROM unnest($1::text[]) AS id`,
    [subs],
  );
  statements = [];
});

/** An event staged as its operation stages one that is not audited (migration 0036); its claim. */
async function stage(): Promise<OutboxClaim> {
  const { rows } = await pool.query(`INSERT INTO webhook_outbox (event) VALUES ('{}') RETURNING id`);
  return { outboxId: rows[0].id };
}

const MESSAGE = {
  event_id: 'evt_00112233aabbccdd',
  event_type: 'status_changed',
  body: '{"a":1}',
  body_sealed: null,
  client_id: 'acme',
};

/** The pending rows of one event's fan-out to the subscriptions `ids`, in that order. */
async function openFanOut(ids: string[]): Promise<DeliveryRow[]> {
  const rows = await log.openFanOut(MESSAGE, ids, AT, await stage());
  return ids.map((id) => rows.get(id)!);
}

function finished(d: DeliveryRow, ok: boolean, tries = ok ? 1 : 2): FinishedDelivery {
  const attempts = Array.from({ length: tries }, (_, i) => ({
    attempt: i + 1,
    status_code: ok && i === tries - 1 ? 200 : null,
    duration_ms: 7 + i,
    error: ok && i === tries - 1 ? null : 'timeout after 5 s',
    attempted_at: new Date(AT.getTime() + i * 5_500).toISOString(),
  }));
  return { deliveryId: d.id, subscriptionId: d.subscription_id, run: d.runs, ok, attempts };
}

const streakOf = async (id: string) =>
  (
    await pool.query(
      'SELECT consecutive_failures AS n, enabled, disabled_reason, updated_at FROM webhook_subscriptions WHERE id = $1',
      [id],
    )
  ).rows[0];
const disabledAudit = async () =>
  (
    await pool.query(
      `SELECT actor, client_id, data FROM audit_events WHERE event_type = 'webhook_disabled' ORDER BY id`,
    )
  ).rows;

describe('DeliveryLog', () => {
  it('opens a fan-out with one statement: a pending row and its lease per subscription, the body sent once', async () => {
    const rows = await openFanOut(subs);
    expect(statements).toHaveLength(1);
    expect(statements[0]!.split('$').length - 1).toBe(10);
    expect(rows.map((r) => r.subscription_id)).toEqual(subs);
    expect(
      rows.every((r) => r.status === 'pending' && r.created_at.getTime() === AT.getTime() && r.body === '{"a":1}'),
    ).toBe(true);
    const { rows: stored } = await pool.query(
      `SELECT id, subscription_id, event_id, event_type, body, client_id, status, attempts FROM webhook_deliveries ORDER BY id`,
    );
    expect(stored).toHaveLength(50);
    expect(new Set(stored.map((r) => r.id))).toEqual(new Set(rows.map((r) => r.id)));
    expect(stored[0]).toMatchObject({
      event_id: 'evt_00112233aabbccdd',
      event_type: 'status_changed',
      body: '{"a":1}',
      client_id: 'acme',
      status: 'pending',
      attempts: [],
    });
    // Each held by this process for a minute of the database's clock (webhooks/leases.ts): its
    // end is 60 s after the INSERT's now(), so at most 60 s after this query's.
    const { rows: leases } = await pool.query(
      `SELECT delivery_id, claimed_by, claimed_until - now() BETWEEN interval '30 seconds' AND interval '60 seconds' AS a_minute
       FROM webhook_delivery_leases ORDER BY delivery_id`,
    );
    expect(leases).toEqual(stored.map((r) => ({ delivery_id: r.id, claimed_by: OWNER, a_minute: true })));
  });

  it('a fan-out claims its staged event: the row goes with it, and a second claim of the event writes nothing', async () => {
    const claim = await stage();
    const first = await log.openFanOut(MESSAGE, subs.slice(0, 2), AT, claim);
    expect(first.size).toBe(2);
    expect((await pool.query('SELECT count(*)::int AS n FROM webhook_outbox')).rows[0].n).toBe(0);
    const second = await log.openFanOut(MESSAGE, subs.slice(0, 2), AT, claim);
    expect(second.size).toBe(0);
    // An event never staged (no subscriber when it was recorded) has nothing to claim either.
    expect((await log.openFanOut(MESSAGE, subs, AT, { auditId: 123_456 })).size).toBe(0);
    expect((await pool.query('SELECT count(*)::int AS n FROM webhook_deliveries')).rows[0].n).toBe(2);
  });

  it("an event's subscribers are read only while it is staged: enabled, listening to its type, of its client or of none", async () => {
    await pool.query(`UPDATE webhook_subscriptions SET enabled = false WHERE id = $1`, [subs[0]]);
    await pool.query(`UPDATE webhook_subscriptions SET event_types = '{scan_completed}' WHERE id = $1`, [subs[1]]);
    await pool.query(`UPDATE webhook_subscriptions SET client_id = 'beta' WHERE id = $1`, [subs[2]]);
    await pool.query(`UPDATE webhook_subscriptions SET client_id = 'acme' WHERE id = $1`, [subs[3]]);
    const event = { event_type: 'status_changed', client_id: 'acme' };
    const claim = await stage();
    const found = await selectSubscribers(db, event, claim);
    expect(found.map((t) => t.id).sort()).toEqual(subs.slice(3).sort());
    expect(found.find((t) => t.id === subs[3])).toEqual({
      id: subs[3],
      url: `https://receiver.test/${subs[3]}`,
      signing_secret: 'secret',
      signing_secret_encrypted: null,
    });
    await log.openFanOut(MESSAGE, [], AT, claim);
    expect(await selectSubscribers(db, event, claim)).toEqual([]);
    expect(await selectSubscribers(db, event, { auditId: 123_456 })).toEqual([]);
  });

  it("finishing deletes the delivery's lease; a run taken over since (runs moved on) writes nothing but still counts in the streak", async () => {
    const [mine, takenOver] = await openFanOut(subs.slice(0, 2));
    // What a sweep does to a delivery whose lease expired: a new run under another owner.
    await pool.query(
      `UPDATE webhook_deliveries SET runs = 2 WHERE id = $1;
       UPDATE webhook_delivery_leases SET claimed_by = 'replica-b:2:00000000' WHERE delivery_id = $1`.replaceAll(
        '$1',
        takenOver!.id,
      ),
    );
    await Promise.all([log.finish(finished(mine!, true)), log.finish(finished(takenOver!, false))]);
    const { rows: stored } = await pool.query(
      'SELECT status, runs, jsonb_array_length(attempts) AS n FROM webhook_deliveries ORDER BY id',
    );
    expect(stored).toEqual([
      { status: 'succeeded', runs: 1, n: 1 },
      { status: 'pending', runs: 2, n: 0 },
    ]);
    const { rows: leases } = await pool.query('SELECT delivery_id, claimed_by FROM webhook_delivery_leases');
    expect(leases).toEqual([{ delivery_id: takenOver!.id, claimed_by: 'replica-b:2:00000000' }]);
    expect(await streakOf(subs[1]!)).toMatchObject({ n: 4 });
    // The run that owns it now finishes it, and its lease goes.
    await log.finish({ ...finished(takenOver!, true), run: 2 });
    const { rows: after } = await pool.query('SELECT status, runs FROM webhook_deliveries WHERE id = $1', [
      takenOver!.id,
    ]);
    expect(after).toEqual([{ status: 'succeeded', runs: 2 }]);
    expect((await pool.query('SELECT 1 FROM webhook_delivery_leases')).rows).toEqual([]);
  });

  it('a subscription deleted since its subscribers were read gets no row, and the others do', async () => {
    await pool.query('DELETE FROM webhook_subscriptions WHERE id = $1', [subs[1]]);
    const rows = await log.openFanOut(
      {
        event_id: 'evt_0000000000000001',
        event_type: 'status_changed',
        body: '{}',
        body_sealed: null,
        client_id: null,
      },
      subs.slice(0, 3),
      AT,
      await stage(),
    );
    expect([...rows.keys()].sort()).toEqual([subs[0], subs[2]]);
    const { rows: stored } = await pool.query(
      'SELECT subscription_id FROM webhook_deliveries ORDER BY subscription_id',
    );
    expect(stored.map((r) => r.subscription_id)).toEqual([subs[0], subs[2]]);
  });

  it('finishes 50 deliveries in one statement: attempts, final status, and every failure streak extended or ended', async () => {
    const rows = await openFanOut(subs);
    statements = [];
    await Promise.all(rows.map((d, i) => log.finish(finished(d, i % 10 !== 0))));
    expect(statements).toHaveLength(1);

    const { rows: deliveries } = await pool.query(
      'SELECT id, subscription_id, status, attempts FROM webhook_deliveries ORDER BY id',
    );
    expect(deliveries.map((d) => d.status)).toEqual(rows.map((_, i) => (i % 10 === 0 ? 'failed' : 'succeeded')));
    expect(deliveries[0].attempts).toEqual([
      {
        attempt: 1,
        status_code: null,
        duration_ms: 7,
        error: 'timeout after 5 s',
        attempted_at: '2026-11-22T10:00:00.000Z',
      },
      {
        attempt: 2,
        status_code: null,
        duration_ms: 8,
        error: 'timeout after 5 s',
        attempted_at: '2026-11-22T10:00:05.500Z',
      },
    ]);
    expect(deliveries[1].attempts).toEqual([
      { attempt: 1, status_code: 200, duration_ms: 7, error: null, attempted_at: '2026-11-22T10:00:00.000Z' },
    ]);
    // Every subscription started with a streak of 3: a success ends it, a failure extends it.
    const { rows: streaks } = await pool.query(
      'SELECT id, consecutive_failures FROM webhook_subscriptions ORDER BY id',
    );
    expect(streaks.map((s) => s.consecutive_failures)).toEqual(subs.map((_, i) => (i % 10 === 0 ? 4 : 0)));
  });

  it('the failure that reaches the limit disables the subscription and audits it, in the same statement', async () => {
    const first = await openFanOut(subs.slice(0, 2));
    statements = [];
    // 3 + 1 = 4 failures: still enabled.
    await Promise.all(first.map((d) => log.finish(finished(d, false))));
    expect(await streakOf(subs[0]!)).toMatchObject({ n: 4, enabled: true, disabled_reason: null });
    expect(await disabledAudit()).toEqual([]);

    const second = await openFanOut(subs.slice(0, 2));
    // Another event to the first subscription, on its way while the second one's outcome disables it.
    const late = await openFanOut(subs.slice(0, 1));
    await Promise.all([log.finish(finished(second[0]!, false)), log.finish(finished(second[1]!, true))]);
    expect(statements).toHaveLength(4);
    expect(await streakOf(subs[0]!)).toEqual({
      n: 5,
      enabled: false,
      disabled_reason: 'Disabled after 5 consecutive failed deliveries',
      updated_at: NOW,
    });
    expect(await streakOf(subs[1]!)).toMatchObject({ n: 0, enabled: true, disabled_reason: null });
    expect(await disabledAudit()).toEqual([
      {
        actor: 'system',
        client_id: null,
        data: {
          subscription_id: subs[0],
          url: `https://receiver.test/${subs[0]}`,
          reason: 'Disabled after 5 consecutive failed deliveries',
        },
      },
    ]);

    // Deliveries already on their way when it was disabled keep counting, but disable (and audit) nothing again.
    await log.finish(finished(late[0]!, false));
    expect(await streakOf(subs[0]!)).toMatchObject({ n: 6, enabled: false });
    expect(await disabledAudit()).toHaveLength(1);
  });

  it('outcomes of one subscription in one batch count in the order they finished', async () => {
    // Two fan-outs to the same subscription finish in one batch: failed, succeeded, failed.
    const a = await openFanOut(subs.slice(0, 1));
    const b = await openFanOut(subs.slice(0, 1));
    const c = await openFanOut(subs.slice(0, 1));
    statements = [];
    await Promise.all([
      log.finish(finished(a[0]!, false)),
      log.finish(finished(b[0]!, true)),
      log.finish(finished(c[0]!, false)),
    ]);
    expect(statements).toHaveLength(1);
    expect(await streakOf(subs[0]!)).toMatchObject({ n: 1, enabled: true });
    // Four failures after the last success reach the limit (5) only with the streak already stored.
    const more = await Promise.all(Array.from({ length: 4 }, () => openFanOut(subs.slice(0, 1))));
    await Promise.all(more.map((r) => log.finish(finished(r[0]!, false))));
    expect(await streakOf(subs[0]!)).toMatchObject({ n: 5, enabled: false });
  });

  it("a shed delivery (neither attempt sent: the receiver's bulkhead turned both away) is logged as failed but neither extends nor ends a streak", async () => {
    // Streak 3 of 5: six shed deliveries would have disabled it; a sent failure after them makes 4.
    const auditedBefore = (await disabledAudit()).length;
    const shedRows = await Promise.all(Array.from({ length: 6 }, () => openFanOut(subs.slice(0, 1))));
    const notSent = (d: DeliveryRow): FinishedDelivery => ({
      ...finished(d, false),
      shed: true,
      attempts: [1, 2].map((attempt) => ({
        attempt,
        status_code: null,
        duration_ms: 20_000,
        error: 'not sent: 1 delivery to this receiver is in flight; waited 20.0 s for a turn',
        attempted_at: AT.toISOString(),
      })),
    });
    await Promise.all(shedRows.map((r) => log.finish(notSent(r[0]!))));
    expect(await streakOf(subs[0]!)).toMatchObject({ n: 3, enabled: true, disabled_reason: null });
    const { rows: stored } = await pool.query(
      `SELECT status, attempts FROM webhook_deliveries WHERE subscription_id = $1`,
      [subs[0]],
    );
    expect(stored.map((r) => r.status)).toEqual(Array(6).fill('failed'));
    expect(stored[0].attempts[1].error).toMatch(/^not sent: /);
    const [sent] = await openFanOut(subs.slice(0, 1));
    await log.finish(finished(sent!, false));
    expect(await streakOf(subs[0]!)).toMatchObject({ n: 4, enabled: true });
    expect(await disabledAudit()).toHaveLength(auditedBefore);
  });

  it('streakChanges folds a batch into one change per subscription', () => {
    expect(
      streakChanges([
        { subscriptionId: 'a', ok: false },
        { subscriptionId: 'b', ok: true },
        { subscriptionId: 'a', ok: true },
        { subscriptionId: 'a', ok: false },
        { subscriptionId: 'a', ok: false },
        { subscriptionId: 'c', ok: false },
        { subscriptionId: 'c', ok: false, shed: true },
        { subscriptionId: 'd', ok: false, shed: true },
      ]),
    ).toEqual([
      { subscriptionId: 'a', restart: true, failures: 2 },
      { subscriptionId: 'b', restart: true, failures: 0 },
      { subscriptionId: 'c', restart: false, failures: 1 },
    ]);
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
    const { rows: done } = await pool.query(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'succeeded'`,
    );
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
  });

  it('one entry the database refuses fails alone: the batch is rewritten entry by entry', async () => {
    const rows = await openFanOut(subs.slice(0, 4));
    statements = [];
    // PostgreSQL's jsonb cannot hold a NUL character.
    const bad = finished(rows[2]!, false);
    bad.attempts[0]!.error = 'bad\u0000byte';
    const results = await Promise.allSettled([
      log.finish(finished(rows[0]!, true)),
      log.finish(finished(rows[1]!, false)),
      log.finish(bad),
      log.finish(finished(rows[3]!, true)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(String((results[2] as PromiseRejectedResult).reason)).toMatch(/unsupported Unicode escape sequence/);
    expect(statements).toHaveLength(1 + 4);
    const { rows: stored } = await pool.query('SELECT status, attempts FROM webhook_deliveries ORDER BY id');
    expect(stored.map((d) => d.status)).toEqual(['succeeded', 'failed', 'pending', 'succeeded']);
    expect(stored.map((d) => d.attempts.length)).toEqual([1, 2, 0, 1]);
    // The refused entry's failure did not count; the others' outcomes did.
    const { rows: streaks } = await pool.query(
      'SELECT consecutive_failures AS n FROM webhook_subscriptions WHERE id = ANY($1) ORDER BY id',
      [subs.slice(0, 4)],
    );
    expect(streaks.map((r) => r.n)).toEqual([0, 4, 3, 0]);
  });
});
