import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// The overview counts, per client and target, the open findings of record
// still to act on (records/portfolio-queries.ts, postureCounts). As a scan of the table that is
// 0.6–0.8 s at 1,000,000 records (bench/README.md, "Overview"). These two partial indexes
// cover every column the count reads, so it is an index-only scan of the open records, split
// where an exception may be in effect (a few percent of them) so the rest need no heap read.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE INDEX finding_records_posture_idx ON finding_records (client_id, target, severity_key, due_date, kev)
      WHERE status <> 'resolved' AND disposition IS NULL AND exception_reason IS NULL;
    CREATE INDEX finding_records_posture_exception_idx
      ON finding_records (client_id, target, exception_expiry, severity_key, due_date, kev)
      WHERE status <> 'resolved' AND disposition IS NULL AND exception_reason IS NOT NULL;
  `.execute(db);
}
