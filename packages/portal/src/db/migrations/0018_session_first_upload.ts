import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// What a scanner key may do to history (docs/api.md#sessions). The key that
// uploaded a session may delete it only within a short window after its upload
// (sessions/key-delete.ts). A re-upload of the same id renews uploaded_at, which would renew the
// window, so the first upload's time is kept apart: first_uploaded_at, never changed after the
// insert. Rows of earlier uploads take their latest upload time (the first is not recorded
// anywhere). A row written without one takes its upload time (trigger, as 0013's scanned_at),
// so every writer of sessions keeps working.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE sessions ADD COLUMN first_uploaded_at timestamptz;
    UPDATE sessions SET first_uploaded_at = uploaded_at;
    ALTER TABLE sessions ALTER COLUMN first_uploaded_at SET NOT NULL;
    CREATE FUNCTION sessions_first_uploaded_at() RETURNS trigger
      LANGUAGE plpgsql AS $$
      BEGIN
        NEW.first_uploaded_at := COALESCE(NEW.first_uploaded_at, NEW.uploaded_at);
        RETURN NEW;
      END
      $$;
    CREATE TRIGGER sessions_first_uploaded_at BEFORE INSERT ON sessions
      FOR EACH ROW EXECUTE FUNCTION sessions_first_uploaded_at();
  `.execute(db);
}
