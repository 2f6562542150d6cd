import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// How many of a session's findings are overdue, kept as its triage counts are (migration 0017)
// so that a first page of its findings sums a few rows instead of reading the record of each of
// its findings (600 ms at 100,000 findings). A row counts the findings of the session whose
// record is open, not a false positive, and due on `due_date`, with the exception in effect
// (`exception_expiry`: '' none, 'never' one without expiry, else its last valid day), so the
// count of any day is a sum. Its state row keeps what the upload did to its findings
// (`change_counts`, a JSON object of counts by change), which no later change alters. Both are
// valid for the stored file the state row names in `due_counted_key` (set when the session is
// counted from scratch); a session counted before, or re-indexed by a replica of an earlier
// version, is counted the slow way meanwhile.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE session_due_counts (
      client_id text NOT NULL,
      session_id text NOT NULL,
      due_date text NOT NULL,
      exception_expiry text NOT NULL,
      n integer NOT NULL,
      PRIMARY KEY (client_id, session_id, due_date, exception_expiry),
      FOREIGN KEY (client_id, session_id) REFERENCES session_findings_state (client_id, session_id) ON DELETE CASCADE
    );
    ALTER TABLE session_findings_state ADD COLUMN due_counted_key text, ADD COLUMN change_counts jsonb;
  `.execute(db);
}
