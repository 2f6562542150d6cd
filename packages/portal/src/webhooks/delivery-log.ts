import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/schema.ts';
import type { AttemptRow, DeliveryRow } from './present.ts';

export interface NewDelivery {
  subscription_id: string;
  event_id: string;
  event_type: string;
  body: string;
  redelivery_of: string | null;
}

export interface FinishedDelivery {
  deliveryId: string;
  status: 'succeeded' | 'failed';
  attempts: AttemptRow[];
  /** A subscription whose failure streak ends with this delivery (set consecutive_failures to 0). */
  resetSubscription: string | null;
}

interface Waiting {
  entry: FinishedDelivery;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** Finished deliveries written by one statement; enough for a few 50-receiver fan-outs. */
const MAX_BATCH = 500;

/**
 * The webhook delivery log's writes, batched. A fan-out to 50 receivers used to cost ~200
 * statements (a delivery row, an attempt row per try, two updates each), which competed
 * with the triggering requests for the pool. Now:
 * - `open` writes all pending rows of one fan-out in one INSERT before anything is posted
 *   (the log shows in-flight deliveries as `pending`);
 * - `finish` queues a finished delivery; one flush at a time writes every queued delivery's
 *   attempts, its final status and the end of its subscription's failure streak in one
 *   statement (group commit: what finishes during a flush joins the next one). One
 *   statement is atomic, so a delivery never reads as finished before its outcome counted.
 * If a batch fails (say a subscription was deleted mid-delivery, and with it its rows), its
 * entries are retried one by one so one bad entry does not lose the others' log.
 */
export class DeliveryLog {
  readonly #db: Kysely<Database>;
  readonly #logger: Logger;
  #queue: Waiting[] = [];
  #flushing = false;

  constructor(db: Kysely<Database>, logger: Logger) {
    this.#db = db;
    this.#logger = logger;
  }

  /** Insert pending deliveries; rows come back in the order given. */
  async open(entries: NewDelivery[], createdAt: Date): Promise<DeliveryRow[]> {
    if (entries.length === 0) return [];
    const ids = await this.#db
      .insertInto('webhook_deliveries')
      .values(entries.map((e) => ({ ...e, created_at: createdAt })))
      .returning(['id', 'subscription_id'])
      .execute();
    // RETURNING follows VALUES in practice, but that is not a documented guarantee: match by
    // subscription (distinct within one fan-out).
    const bySub = new Map(ids.map((r) => [r.subscription_id, r.id]));
    return entries.map((e) => {
      const id = bySub.get(e.subscription_id);
      if (id === undefined) throw new Error(`delivery row for ${e.subscription_id} missing from RETURNING`);
      return { ...e, id, status: 'pending', created_at: createdAt };
    });
  }

  /** Resolves once the delivery's attempts and status are committed. */
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
      this.#logger.warn({ err, deliveries: batch.length }, 'webhook delivery log batch failed; writing its entries one by one');
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
    const attempts = entries.flatMap((e) => e.attempts);
    const resets = [...new Set(entries.flatMap((e) => (e.resetSubscription === null ? [] : [e.resetSubscription])))];
    await sql`
      WITH attempts AS (
        INSERT INTO webhook_delivery_attempts (delivery_id, attempt, status_code, duration_ms, error, attempted_at)
        SELECT a.* FROM unnest(${attempts.map((a) => a.delivery_id)}::bigint[], ${attempts.map((a) => a.attempt)}::int[],
                               ${attempts.map((a) => a.status_code)}::int[], ${attempts.map((a) => a.duration_ms)}::int[],
                               ${attempts.map((a) => a.error)}::text[], ${attempts.map((a) => a.attempted_at)}::timestamptz[])
                 AS a(delivery_id, attempt, status_code, duration_ms, error, attempted_at)
        -- A subscription deleted mid-delivery took its delivery rows with it (ON DELETE CASCADE).
        WHERE EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = a.delivery_id)
        RETURNING delivery_id
      ), streaks AS (
        UPDATE webhook_subscriptions SET consecutive_failures = 0
        WHERE id = ANY(${resets}::text[]) AND consecutive_failures > 0
        RETURNING id
      )
      UPDATE webhook_deliveries d SET status = f.status
      FROM unnest(${entries.map((e) => e.deliveryId)}::bigint[], ${entries.map((e) => e.status)}::text[]) AS f(id, status)
      WHERE d.id = f.id
    `.execute(this.#db);
  }
}
