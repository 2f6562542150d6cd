import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../db/schema.ts';
import { conflict } from '../http/errors.ts';

export interface ClientSlot {
  /** The client the subscription will belong to (null: every client's events, admin only). */
  clientId: string | null;
  /** The normalised URL it will have (assertSafeUrl). */
  url: string;
  /** The subscription being changed, which does not count against itself; null on creation. */
  ownId: string | null;
  /** Whether it takes a new place under `clientId` (creation, or a move to another client). */
  counts: boolean;
  /** SVC_WEBHOOK_MAX_PER_CLIENT; subscriptions without client_id (admin only) have no cap. */
  max: number;
}

export const DUPLICATE_URL = 'A subscription with this URL already exists for this client';

/**
 * Run `write` in a transaction that holds the client's subscription lock, after checking that
 * the client keeps at most `max` subscriptions and no two with the same URL. The lock (one per
 * client_id, none included) makes the check and the write one step: two concurrent creations
 * cannot both take the last place or both add the same URL.
 */
export function withinClientLimits<T>(
  db: Kysely<Database>,
  slot: ClientSlot,
  write: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(hashtext(${`svc.webhook_subscriptions:${slot.clientId ?? ''}`}))`.execute(
      trx,
    );
    const { rows } = await sql<{ total: number; same_url: number }>`
      SELECT count(*)::int AS total, count(*) FILTER (WHERE url = ${slot.url})::int AS same_url
      FROM webhook_subscriptions
      WHERE client_id IS NOT DISTINCT FROM ${slot.clientId}::text AND id IS DISTINCT FROM ${slot.ownId}::text
    `.execute(trx);
    const { total, same_url } = rows[0] as { total: number; same_url: number };
    if (same_url > 0) throw conflict(DUPLICATE_URL);
    if (slot.counts && slot.clientId !== null && total >= slot.max)
      throw conflict(`This client already has ${slot.max} webhook subscriptions, the most allowed`);
    return write(trx);
  });
}
