import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// A large upload of a new session writes its findings index on a second connection while its
// own transaction writes the findings of record (sessions/index-beside.ts): those rows commit
// before the session does, and belong to no session until its transaction publishes them. Each
// such write is noted here in the same commit as its rows, and the upload's transaction removes
// the note in the commit that publishes them; a note left behind names the rows of an upload that
// failed or whose portal stopped in between, which the orphan sweep then removes.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE session_index_pending (
      client_id text NOT NULL,
      session_id text NOT NULL,
      written_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (client_id, session_id)
    );
  `.execute(db);
}
