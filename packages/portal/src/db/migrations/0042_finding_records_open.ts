import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// A record's update skips every index (a HOT update) only when no column an index names, in
// its keys or its predicate, changes value, and the new version fits on the record's page. The
// three partial indexes of open records named `status`, which a target's second scan moves
// from new to persistent on every record, so that rescan wrote all 14 indexes for each record.
// They name `is_open` now, which that move leaves as it was; the queries they serve say
// `is_open` (records/portfolio-queries.ts, overview/queries.ts). With pages half full a whole
// rescan's new versions fit beside the old ones, as 30 % free (migration 0034) held only
// three in seven of them (bench/README.md, "Sessions of many findings"). The fill is set
// before the column is added, so the table's rewrite for that column packs its pages at it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE finding_records SET (fillfactor = 50);
    ALTER TABLE finding_records ADD COLUMN is_open boolean GENERATED ALWAYS AS (status <> 'resolved') STORED;
    DROP INDEX finding_records_open_due_idx;
    DROP INDEX finding_records_posture_idx;
    DROP INDEX finding_records_posture_exception_idx;
    CREATE INDEX finding_records_open_due_idx ON finding_records (due_date)
      WHERE is_open AND disposition IS NULL;
    CREATE INDEX finding_records_posture_idx ON finding_records (client_id, target, severity_key, due_date, kev)
      WHERE is_open AND disposition IS NULL AND exception_reason IS NULL;
    CREATE INDEX finding_records_posture_exception_idx
      ON finding_records (client_id, target, exception_expiry, severity_key, due_date, kev)
      WHERE is_open AND disposition IS NULL AND exception_reason IS NOT NULL;
  `.execute(db);
}
