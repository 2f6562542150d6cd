import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// GET /api/findings sorts by first seen, due date, EPSS and host besides
// severity (records/portfolio-queries.ts). Each order ends on the id, records without the key
// last, and has one index across every client, so an admin's page (every client, 1,000,000
// records) is an index range scan, as the severity order's is. One index serves first seen in
// both directions (scanned backwards for newest first); hosts sort in byte order, whatever the
// database's locale. No per-client copies: a client's or a
// few clients' records come from the client index and are sorted, and four more indexes per
// write were not worth it (bench/README.md, "Portfolio sort orders").
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE INDEX finding_records_first_seen_idx ON finding_records (first_seen_at, id);
    CREATE INDEX finding_records_due_idx ON finding_records (due_date, id);
    CREATE INDEX finding_records_epss_idx ON finding_records (epss DESC NULLS LAST, id DESC);
    CREATE INDEX finding_records_host_order_idx ON finding_records (host COLLATE "C", id);
  `.execute(db);
}
