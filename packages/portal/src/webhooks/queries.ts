import { sql, type Insertable, type Kysely, type Transaction, type Updateable } from 'kysely';
import type { Database, WebhookSubscriptionsTable } from '../db/schema.ts';
import { type OutboxClaim, stagedRow } from './outbox-queries.ts';
import type { DeliveryRow, SubscriptionRow } from './present.ts';

type Db = Kysely<Database> | Transaction<Database>;

export function selectSubscription(db: Db, id: string): Promise<SubscriptionRow | undefined> {
  return db.selectFrom('webhook_subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Oldest first; `clientIds` null: every subscription, otherwise those bound to one of these clients. */
export async function selectSubscriptions(db: Db, clientIds: string[] | null): Promise<SubscriptionRow[]> {
  if (clientIds !== null && clientIds.length === 0) return [];
  let q = db.selectFrom('webhook_subscriptions').selectAll().orderBy('created_at').orderBy('id');
  if (clientIds !== null) q = q.where('client_id', 'in', clientIds);
  return q.execute();
}

/** What delivering to a subscription needs of it. */
export type Target = Pick<SubscriptionRow, 'id' | 'url' | 'signing_secret' | 'signing_secret_encrypted'>;

/**
 * What an event is delivered to: enabled subscriptions to its type, of its client or of none;
 * nobody unless the event is staged (migration 0036: one claimed already, or never staged because
 * nobody listened when it was recorded, is not sent).
 */
export async function selectSubscribers(
  db: Db,
  event: { event_type: string; client_id: string | null },
  claim: OutboxClaim,
): Promise<Target[]> {
  const { rows } = await sql<Target>`
    SELECT w.id, w.url, w.signing_secret, w.signing_secret_encrypted FROM webhook_subscriptions w
    WHERE w.enabled AND ${event.event_type} = ANY(w.event_types)
      AND (w.client_id IS NULL OR w.client_id = ${event.client_id}::text)
      AND EXISTS (SELECT 1 FROM webhook_outbox WHERE ${stagedRow(claim)})
  `.execute(db);
  return rows;
}

/** Secrets an older version stored in clear. */
export async function clearSecretRows(db: Db): Promise<{ id: string; signing_secret: string }[]> {
  const rows = await db
    .selectFrom('webhook_subscriptions')
    .select(['id', 'signing_secret'])
    .where('signing_secret', 'is not', null)
    .execute();
  return rows.map((r) => ({ id: r.id, signing_secret: r.signing_secret as string }));
}

/** Delivery bodies an older version stored with a share token in clear (before migration 0036). */
export async function clearBodyRows(db: Db): Promise<{ id: string; event_id: string; body: string }[]> {
  const { rows } = await sql<{ id: string; event_id: string; body: string }>`
    SELECT id, event_id, body FROM webhook_deliveries
    WHERE body_sealed IS NULL AND event_type = 'scan_completed' AND body ~ 'token=[0-9A-Fa-f]{64}'
  `.execute(db);
  return rows;
}

/** Stores a delivery's redacted body and its sealed copy, unless the row changed meanwhile. */
export async function storeSealedBody(db: Db, id: string, clear: string, redacted: string, sealed: string) {
  await db
    .updateTable('webhook_deliveries')
    .set({ body: redacted, body_sealed: sealed })
    .where('id', '=', id)
    .where('body', '=', clear)
    .where('body_sealed', 'is', null)
    .execute();
}

/** Stores the encrypted secret and empties the clear column, unless the row changed meanwhile. */
export async function storeEncryptedSecret(db: Db, id: string, clear: string, encrypted: string): Promise<void> {
  await db
    .updateTable('webhook_subscriptions')
    .set({ signing_secret_encrypted: encrypted, signing_secret: null })
    .where('id', '=', id)
    .where('signing_secret', '=', clear)
    .execute();
}

export function oneEncryptedSecret(
  db: Db,
): Promise<Pick<SubscriptionRow, 'id' | 'signing_secret' | 'signing_secret_encrypted'> | undefined> {
  return db
    .selectFrom('webhook_subscriptions')
    .select(['id', 'signing_secret', 'signing_secret_encrypted'])
    .where('signing_secret_encrypted', 'is not', null)
    .limit(1)
    .executeTakeFirst();
}

export function insertSubscription(db: Db, values: Insertable<WebhookSubscriptionsTable>): Promise<SubscriptionRow> {
  return db.insertInto('webhook_subscriptions').values(values).returningAll().executeTakeFirstOrThrow();
}

export function updateSubscription(
  db: Db,
  id: string,
  changes: Updateable<WebhookSubscriptionsTable>,
): Promise<SubscriptionRow> {
  return db
    .updateTable('webhook_subscriptions')
    .set(changes)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The subscription and, by cascade, its delivery log. */
export async function deleteSubscription(db: Db, id: string): Promise<void> {
  await db.deleteFrom('webhook_subscriptions').where('id', '=', id).execute();
}

/**
 * Held until the transaction ends: one lock per client_id (none included), so that checking a
 * client's subscriptions and writing one are a single step for concurrent writers.
 */
export async function lockClientSubscriptions(trx: Transaction<Database>, clientId: string | null): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext(${`svc.webhook_subscriptions:${clientId ?? ''}`}))`.execute(trx);
}

/** The client's subscriptions other than `ownId`, and how many of them have `url`. */
export async function countClientSubscriptions(
  trx: Transaction<Database>,
  clientId: string | null,
  url: string,
  ownId: string | null,
): Promise<{ total: number; same_url: number }> {
  const { rows } = await sql<{ total: number; same_url: number }>`
    SELECT count(*)::int AS total, count(*) FILTER (WHERE url = ${url})::int AS same_url
    FROM webhook_subscriptions
    WHERE client_id IS NOT DISTINCT FROM ${clientId}::text AND id IS DISTINCT FROM ${ownId}::text
  `.execute(trx);
  return rows[0] as { total: number; same_url: number };
}

export function selectDelivery(db: Db, id: string): Promise<DeliveryRow | undefined> {
  return db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Newest first; `clientIds` null: every delivery, otherwise those of events of these clients. */
export function selectDeliveries(
  db: Db,
  subscriptionId: string,
  clientIds: string[] | null,
  limit: number,
): Promise<DeliveryRow[]> {
  let q = db.selectFrom('webhook_deliveries').selectAll().where('subscription_id', '=', subscriptionId);
  if (clientIds !== null) q = q.where('client_id', 'in', clientIds);
  return q.orderBy('id', 'desc').limit(limit).execute();
}
