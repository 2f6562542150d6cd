import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE sessions (
      session_id         text PRIMARY KEY,
      client_id          text,
      client             text,
      target             text,
      status             text NOT NULL DEFAULT 'new' CHECK (status IN ('new', 'in_review', 'resolved', 'archived')),
      risk_score         double precision,
      risk_grade         text,
      metadata           jsonb NOT NULL,
      files              jsonb NOT NULL,
      license_id         text,
      version            integer NOT NULL DEFAULT 1,
      uploaded_at        timestamptz NOT NULL,
      updated_at         timestamptz NOT NULL,
      expires_at         timestamptz NOT NULL,
      expiry_notified_at timestamptz
    );
    CREATE INDEX sessions_uploaded_idx ON sessions (uploaded_at DESC, session_id DESC);
    CREATE INDEX sessions_client_uploaded_idx ON sessions (client_id, uploaded_at DESC, session_id DESC);
    CREATE INDEX sessions_peer_idx ON sessions (client_id, target, uploaded_at DESC);
    CREATE INDEX sessions_license_idx ON sessions (license_id) WHERE license_id IS NOT NULL;
    CREATE INDEX sessions_expires_idx ON sessions (expires_at);

    CREATE TABLE share_tokens (
      token      text PRIMARY KEY,
      session_id text NOT NULL UNIQUE REFERENCES sessions(session_id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE status_history (
      id          bigserial PRIMARY KEY,
      session_id  text NOT NULL REFERENCES sessions(session_id) ON DELETE CASCADE,
      from_status text,
      to_status   text NOT NULL,
      changed_by  text NOT NULL,
      note        text,
      changed_at  timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX status_history_session_idx ON status_history (session_id, changed_at);

    CREATE TABLE session_notes (
      id         bigserial PRIMARY KEY,
      session_id text NOT NULL REFERENCES sessions(session_id) ON DELETE CASCADE,
      author     text NOT NULL,
      note       text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX session_notes_session_idx ON session_notes (session_id, created_at);
  `.execute(db);
}
