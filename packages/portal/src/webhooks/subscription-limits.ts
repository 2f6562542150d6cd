import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.ts';
import { DomainError } from '../domain/errors.ts';
import { countClientSubscriptions, lockClientSubscriptions } from './queries.ts';

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

/**
 * Run `write` in a transaction that holds the client's subscription lock, after checking that
 * the client keeps at most `max` subscriptions and no two with the same URL. With the lock, two
 * concurrent creations cannot both take the last place or both add the same URL.
 */
export function withinClientLimits<T>(
  db: Kysely<Database>,
  slot: ClientSlot,
  write: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await lockClientSubscriptions(trx, slot.clientId);
    const { total, same_url } = await countClientSubscriptions(trx, slot.clientId, slot.url, slot.ownId);
    if (same_url > 0)
      throw new DomainError(
        'conflict.webhook_url_taken',
        'A subscription with this URL already exists for this client',
      );
    if (slot.counts && slot.clientId !== null && total >= slot.max)
      throw new DomainError(
        'conflict.webhook_limit',
        `This client already has ${slot.max} webhook subscriptions, the most allowed`,
      );
    return write(trx);
  });
}
