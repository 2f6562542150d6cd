import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// The portfolio's host filters (a whole address, or the start of one) compare in byte order
// (records/portfolio-queries.ts), which the host order's index of migration 0022
// (host COLLATE "C", id) serves as a range: the two pattern indexes on the host, across the
// portfolio and within one client, were written on every new record for what that index
// already answers. Within one client PostgreSQL picks that range or the client's order index.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX finding_records_host_idx;
    DROP INDEX finding_records_host_any_idx;
  `.execute(db);
}
