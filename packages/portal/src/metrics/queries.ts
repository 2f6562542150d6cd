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
