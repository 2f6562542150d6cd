import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// docs/api.md#ids-are-per-client: session ids are unique per client. Sessions become keyed by (client_id, session_id)
// and every table that points at a session carries both columns. Sessions uploaded without
// a client (the legacy key with a file that has no client_id) keep their own namespace, the
// empty client id '' (a NOT NULL sentinel no real client id can be: ClientId needs one character).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    UPDATE sessions SET client_id = '' WHERE client_id IS NULL;
    ALTER TABLE sessions ALTER COLUMN client_id SET NOT NULL;

    ALTER TABLE share_tokens DROP CONSTRAINT share_tokens_session_id_fkey;
    ALTER TABLE share_tokens DROP CONSTRAINT share_tokens_session_id_key;
    ALTER TABLE status_history DROP CONSTRAINT status_history_session_id_fkey;
    ALTER TABLE session_notes DROP CONSTRAINT session_notes_session_id_fkey;

    ALTER TABLE share_tokens ADD COLUMN client_id text;
    UPDATE share_tokens t SET client_id = s.client_id FROM sessions s WHERE s.session_id = t.session_id;
    ALTER TABLE status_history ADD COLUMN client_id text;
    UPDATE status_history t SET client_id = s.client_id FROM sessions s WHERE s.session_id = t.session_id;
    ALTER TABLE session_notes ADD COLUMN client_id text;
    UPDATE session_notes t SET client_id = s.client_id FROM sessions s WHERE s.session_id = t.session_id;
    -- Rows whose session is gone cannot exist (the old foreign keys cascaded); be safe anyway.
    DELETE FROM share_tokens WHERE client_id IS NULL;
    DELETE FROM status_history WHERE client_id IS NULL;
    DELETE FROM session_notes WHERE client_id IS NULL;
    ALTER TABLE share_tokens ALTER COLUMN client_id SET NOT NULL;
    ALTER TABLE status_history ALTER COLUMN client_id SET NOT NULL;
    ALTER TABLE session_notes ALTER COLUMN client_id SET NOT NULL;

    ALTER TABLE sessions DROP CONSTRAINT sessions_pkey;
    ALTER TABLE sessions ADD PRIMARY KEY (client_id, session_id);
    -- Lookups by id alone (admins, the legacy key) and the ambiguity check.
    CREATE INDEX sessions_session_id_idx ON sessions (session_id);
    DROP INDEX sessions_uploaded_idx;
    CREATE INDEX sessions_uploaded_idx ON sessions (uploaded_at DESC, session_id DESC, client_id DESC);
    DROP INDEX sessions_client_uploaded_idx;
    CREATE INDEX sessions_client_uploaded_idx ON sessions (client_id, uploaded_at DESC, session_id DESC);

    ALTER TABLE share_tokens ADD CONSTRAINT share_tokens_session_key UNIQUE (client_id, session_id);
    ALTER TABLE share_tokens ADD CONSTRAINT share_tokens_session_fkey
      FOREIGN KEY (client_id, session_id) REFERENCES sessions (client_id, session_id) ON DELETE CASCADE;
    ALTER TABLE status_history ADD CONSTRAINT status_history_session_fkey
      FOREIGN KEY (client_id, session_id) REFERENCES sessions (client_id, session_id) ON DELETE CASCADE;
    ALTER TABLE session_notes ADD CONSTRAINT session_notes_session_fkey
      FOREIGN KEY (client_id, session_id) REFERENCES sessions (client_id, session_id) ON DELETE CASCADE;
    DROP INDEX status_history_session_idx;
    CREATE INDEX status_history_session_idx ON status_history (client_id, session_id, changed_at);
    DROP INDEX session_notes_session_idx;
    CREATE INDEX session_notes_session_idx ON session_notes (client_id, session_id, created_at);
  `.execute(db);
}
