import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// Three indexes of session_findings that no query reads, each written for every finding of
// every upload. Sorting a session's findings by status or by first seen sorts by what the
// finding's record states (sessions/findings-queries.ts, SORT_KEYS), so the file's own
// status_key and first_seen_key are never the order an index could give. The moves of triage
// counts look findings up by record key (session_findings_record_idx, client and record key),
// which serves them as well as the per-session index of record keys did; every other read of
// the table goes by session and ordinal (its primary key).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX session_findings_status_idx;
    DROP INDEX session_findings_first_seen_idx;
    DROP INDEX session_findings_fingerprint_idx;
  `.execute(db);
}
