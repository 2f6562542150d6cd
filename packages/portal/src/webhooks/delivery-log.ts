import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { DeliveryAttempt } from '@svc/protocol';
import type { Database } from '../db/schema.ts';
import { type OutboxClaim, stagedRow } from './outbox-queries.ts';
import type { DeliveryRow } from './present.ts';

export interface NewDelivery {
  subscription_id: string;
  event_id: string;
  event_type: string;
  /** As stored: with any secret redacted (the whole body is then in `body_sealed`). */
  body: string;
  body_sealed: string | null;
  redelivery_of: string | null;
  /** The event's client (who may see the delivery), not the subscription's. */
  client_id: string | null;
}

/** What is sent: the same body and event id to every subscriber of an event (of that client). */
export type DeliveryMessage = Pick<NewDelivery, 'event_id' | 'event_type' | 'body' | 'body_sealed' | 'client_id'>;

export interface FinishedDelivery {
  deliveryId: string;
  subscriptionId: string;
  /** The run that ends (the delivery's `runs` when it started): a run taken over since writes nothing. */
  run: number;
  ok: boolean;
  /** Failed without a single attempt sent (bulkhead): logged, but no failure of the receiver. */
  shed?: boolean;
  attempts: DeliveryAttempt[];
}

interface Waiting {
  entry: FinishedDelivery;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** What a batch does to one subscription's failure streak, in the order its deliveries finished. */
export interface StreakChange {
  subscriptionId: string;
  /** A delivery succeeded: the streak restarts from `failures` (those after the last success). */
  restart: boolean;
  failures: number;
}

/** Finished deliveries written by one statement; enough for a few 50-receiver fan-outs. */
const MAX_BATCH = 500;

/**
 * Fold a batch's outcomes into one change per subscription, keeping their order. A shed
 * delivery was never sent: it neither extends nor ends a streak.
 */
export function streakChanges(
  entries: readonly Pick<FinishedDelivery, 'subscriptionId' | 'ok' | 'shed'>[],
): StreakChange[] {
  const bySub = new Map<string, StreakChange>();
  for (const e of entries) {
    if (e.shed === true && !e.ok) continue;
    const c = bySub.get(e.subscriptionId) ?? { subscriptionId: e.subscriptionId, restart: false, failures: 0 };
    if (e.ok) {
      c.restart = true;
      c.failures = 0;
    } else {
      c.failures++;
    }
    bySub.set(e.subscriptionId, c);
  }
  return [...bySub.values()];
}

/**
 * The webhook delivery log's writes, batched so that a fan-out to many receivers costs a few
 * statements instead of several per receiver, which would compete with the triggering
 * requests for the pool:
 * - `openFanOut` writes the pending rows of one event's fan-out, and their leases, in one
 *   statement (the log shows in-flight deliveries as `pending`);
 * - `finish` queues a finished delivery; one flush at a time writes, in one statement,
 *   every queued delivery's attempts and final status, every failure streak it extends or
 *   ends, the disabling of a subscription whose streak reaches the limit and that
 *   disabling's audit event (group commit: what finishes during a flush joins the next
 *   one). One statement is atomic, so a delivery never reads as finished before its
 *   outcome counted. It also deletes the finished deliveries' leases (webhooks/leases.ts).
 * If a batch fails, its entries are retried one by one so one bad entry does not lose the
 * others' log.
 */
export class DeliveryLog {
  readonly #db: Kysely<Database>;
  readonly #logger: Logger;
  readonly #disableAfterFailures: number;
  readonly #now: () => Date;
  readonly #lease: { owner: string; seconds: number };
  #queue: Waiting[] = [];
  #flushing = false;

  constructor(opts: {
    db: Kysely<Database>;
    logger: Logger;
    disableAfterFailures: number;
    now: () => Date;
    /** Who sends the deliveries opened here, and for how long a lease holds unless renewed. */
    lease: { owner: string; seconds: number };
  }) {
    this.#db = opts.db;
    this.#logger = opts.logger;
    this.#disableAfterFailures = opts.disableAfterFailures;
    this.#now = opts.now;
    this.#lease = opts.lease;
  }

  /** The lease every delivery opened here starts with: this process's, ending `seconds` from now. */
  #leaseValues() {
    return sql`${this.#lease.owner}, now() + ${this.#lease.seconds}::int * interval '1 second'`;
  }

  /**
   * Claim an event's row in webhook_outbox and write the pending rows of its fan-out and their
   * leases, in one statement: the body goes to the database once, not once per receiver. The
   * claim deletes the row, so of a process and a sweep that both reach one event, one writes its
   * fan-out and the other nothing (then the map is empty). A subscription deleted since its
   * subscribers were read gets no row (its log went with it). Answers the delivery row of each
   * subscription.
   */
  async openFanOut(
    message: DeliveryMessage,
    subscriptionIds: string[],
    createdAt: Date,
    claim: OutboxClaim,
  ): Promise<Map<string, DeliveryRow>> {
    const { rows } = await sql<{ id: string; subscription_id: string }>`
      WITH claimed AS (
        DELETE FROM webhook_outbox WHERE ${stagedRow(claim)} RETURNING id
      ), opened AS (
        INSERT INTO webhook_deliveries (subscription_id, event_id, event_type, body, body_sealed, client_id, created_at)
        SELECT s.id, ${message.event_id}, ${message.event_type}, ${message.body}, ${message.body_sealed}::text,
               ${message.client_id}::text, ${createdAt}::timestamptz
        FROM unnest(${subscriptionIds}::text[]) AS s(id)
        WHERE EXISTS (SELECT 1 FROM claimed) AND EXISTS (SELECT 1 FROM webhook_subscriptions w WHERE w.id = s.id)
        RETURNING id, subscription_id
      ), leased AS (
        INSERT INTO webhook_delivery_leases (delivery_id, claimed_by, claimed_until)
        SELECT id, ${this.#leaseValues()} FROM opened
      )
      SELECT id, subscription_id FROM opened
    `.execute(this.#db);
    return new Map(
      rows.map((r) => [
        r.subscription_id,
        {
          ...message,
          id: r.id,
          subscription_id: r.subscription_id,
          status: 'pending',
          redelivery_of: null,
          created_at: createdAt,
          attempts: [],
          runs: 1,
        },
      ]),
    );
  }

  /** Insert one pending delivery and its lease (a ping or a redelivery, to a subscription already known). */
  async open(entry: NewDelivery, createdAt: Date): Promise<DeliveryRow> {
    const { rows } = await sql<{ id: string }>`
      WITH opened AS (
        INSERT INTO webhook_deliveries (subscription_id, event_id, event_type, body, body_sealed, redelivery_of, client_id, created_at)
        VALUES (${entry.subscription_id}, ${entry.event_id}, ${entry.event_type}, ${entry.body}, ${entry.body_sealed}::text,
                ${entry.redelivery_of}::bigint, ${entry.client_id}::text, ${createdAt}::timestamptz)
        RETURNING id
      ), leased AS (
        INSERT INTO webhook_delivery_leases (delivery_id, claimed_by, claimed_until)
        SELECT id, ${this.#leaseValues()} FROM opened
      )
      SELECT id FROM opened
    `.execute(this.#db);
    const id = (rows[0] as { id: string }).id;
    return { ...entry, id, status: 'pending', created_at: createdAt, attempts: [], runs: 1 };
  }

  /** Resolves once the delivery's attempts, status and failure streak are committed. */
  finish(entry: FinishedDelivery): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ entry, resolve, reject });
      if (!this.#flushing) {
        this.#flushing = true;
        // Let deliveries finishing in this turn of the event loop join the first batch.
        setImmediate(() => void this.#flushLoop());
      }
    });
  }

  async #flushLoop(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, MAX_BATCH);
        await this.#writeBatch(batch);
      }
    } finally {
      this.#flushing = false;
    }
  }

  async #writeBatch(batch: Waiting[]): Promise<void> {
    try {
      await this.#write(batch.map((w) => w.entry));
      for (const w of batch) w.resolve();
      return;
    } catch (err) {
      if (batch.length === 1) {
        batch[0]?.reject(err);
        return;
      }
      this.#logger.warn(
        { err, deliveries: batch.length },
        'webhook delivery log batch failed; writing its entries one by one',
      );
    }
    for (const w of batch) {
      try {
        await this.#write([w.entry]);
        w.resolve();
      } catch (err) {
        w.reject(err);
      }
    }
  }

  async #write(entries: FinishedDelivery[]): Promise<void> {
    const streaks = streakChanges(entries);
    const limit = this.#disableAfterFailures;
    // `finished` writes only a run that still owns its delivery: one taken over meanwhile (its
    // lease had expired) or abandoned leaves the row to the newer run or state. Its outcome still
    // counts in the streak: the receiver did answer it. `pre` locks each subscription and reads
    // its current streak (the newest committed row, as the UPDATE will see it); the UPDATE's
    // RETURNING only shows new values, so whether this statement disabled it comes from `pre`.
    const { rows } = await sql<{ id: string }>`
      WITH finished AS (
        UPDATE webhook_deliveries d SET status = f.status, attempts = f.attempts
        FROM unnest(${entries.map((e) => e.deliveryId)}::bigint[], ${entries.map((e) => (e.ok ? 'succeeded' : 'failed'))}::text[],
                    ${entries.map((e) => JSON.stringify(e.attempts))}::jsonb[], ${entries.map((e) => e.run)}::int[]) AS f(id, status, attempts, run)
        WHERE d.id = f.id AND d.status = 'pending' AND d.runs = f.run
        RETURNING d.id
      ), released AS (
        DELETE FROM webhook_delivery_leases l USING finished WHERE l.delivery_id = finished.id
      ), changes AS (
        SELECT * FROM unnest(${streaks.map((s) => s.subscriptionId)}::text[], ${streaks.map((s) => s.restart)}::boolean[],
                             ${streaks.map((s) => s.failures)}::int[]) AS c(id, restart, failures)
      ), pre AS (
        SELECT w.id, w.enabled,
               CASE WHEN c.restart THEN c.failures ELSE w.consecutive_failures + c.failures END AS streak
        FROM webhook_subscriptions w JOIN changes c ON c.id = w.id
        WHERE c.failures > 0 OR w.consecutive_failures > 0
        FOR UPDATE OF w
      ), streaks AS (
        UPDATE webhook_subscriptions w
        SET consecutive_failures = pre.streak,
            enabled = w.enabled AND pre.streak < ${limit}::int,
            disabled_reason = CASE WHEN w.enabled AND pre.streak >= ${limit}::int
                                   THEN 'Disabled after ' || pre.streak || ' consecutive failed deliveries'
                                   ELSE w.disabled_reason END,
            updated_at = CASE WHEN w.enabled AND pre.streak >= ${limit}::int THEN ${this.#now()}::timestamptz ELSE w.updated_at END
        FROM pre
        WHERE w.id = pre.id
        RETURNING w.id, w.client_id, w.url, w.disabled_reason, pre.enabled AND NOT w.enabled AS disabled_now
      ), audit AS (
        INSERT INTO audit_events (event_type, actor, client_id, data)
        SELECT 'webhook_disabled', 'system', client_id, jsonb_build_object('subscription_id', id, 'url', url, 'reason', disabled_reason)
        FROM streaks WHERE disabled_now
      )
      SELECT id FROM streaks WHERE disabled_now
    `.execute(this.#db);
    for (const r of rows)
      this.#logger.warn({ subscription_id: r.id }, 'webhook subscription disabled after repeated failures');
  }
}
