import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// The console's overview draws risk over time by when a scan ran, not when it was
// uploaded, and lists the most frequent open findings; the sessions list sorts by scan time
// and searches target and client without regard to case.
// - scanned_at: the file's metadata.finished_at (else started_at) at upload, else the upload
//   time. Rows of earlier uploads take their upload time: the scan time is only in the stored
//   file, which a migration does not read. A row written without one takes its upload time
//   (trigger), so every writer of sessions keeps working.
// - open_findings: the open remediation entries of the file by title (sessions/scan-facts.ts),
//   rewritten at upload and at every remediation update. Earlier rows start empty and fill at
//   their next upload or remediation update.
// Search is lower(column) LIKE '%…%': no index helps a leading wildcard without pg_trgm, which
// the embedded PostgreSQL does not ship; a listing is always within one user's clients.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE sessions ADD COLUMN scanned_at timestamptz;
    UPDATE sessions SET scanned_at = uploaded_at;
    ALTER TABLE sessions ALTER COLUMN scanned_at SET NOT NULL;
    CREATE FUNCTION sessions_scanned_at() RETURNS trigger
      LANGUAGE plpgsql AS $$
      BEGIN
        NEW.scanned_at := COALESCE(NEW.scanned_at, NEW.uploaded_at);
        RETURN NEW;
      END
      $$;
    CREATE TRIGGER sessions_scanned_at BEFORE INSERT OR UPDATE ON sessions
      FOR EACH ROW EXECUTE FUNCTION sessions_scanned_at();
    ALTER TABLE sessions ADD COLUMN open_findings jsonb NOT NULL DEFAULT '[]'::jsonb;
    CREATE INDEX sessions_client_scanned_idx ON sessions (client_id, scanned_at);
  `.execute(db);
}
