import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/schema.ts';

/** A scrape never holds a connection longer than this (the server cancels the count). */
const COUNT_TIMEOUT_MS = 2_000;

/** Agent commands per status: one grouped count, run when /metrics is scraped, never per request. */
export async function commandCountsByStatus(db: Kysely<Database>): Promise<Record<string, number>> {
  const rows = await db.transaction().execute(async (trx) => {
    await sql`SET LOCAL statement_timeout = ${sql.lit(COUNT_TIMEOUT_MS)}`.execute(trx);
    return trx
      .selectFrom('agent_commands')
      .select(['status', (eb) => eb.fn.countAll<string>().as('count')])
      .groupBy('status')
      .execute();
  });
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.count)]));
}

/**
 * Seconds since the oldest delivery still in flight was created (0 when none is). Every pending
 * delivery holds a lease (migration 0019), so the join reads only the deliveries in flight.
 */
export async function oldestDeliveryAgeSeconds(db: Kysely<Database>, now: Date): Promise<number> {
  const row = await db
    .selectFrom('webhook_delivery_leases as l')
    .innerJoin('webhook_deliveries as d', 'd.id', 'l.delivery_id')
    .where('d.status', '=', 'pending')
    .select((eb) => eb.fn.min('d.created_at').as('oldest'))
    .executeTakeFirst();
  const oldest = row?.oldest;
  if (oldest === null || oldest === undefined) return 0;
  return Math.max(0, (now.getTime() - new Date(oldest).getTime()) / 1000);
}
