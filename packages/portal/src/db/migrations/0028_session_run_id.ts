import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// A session id is the second a scan started, so two agents of one client running one
// group schedule against the same target can produce the same id. The scanner now writes a
// random run id into each session file; the session keeps the run id of what it holds, and an
// upload of another run under its id is refused instead of replacing it (sessions/commit.ts).
// Null for sessions uploaded before, and for files without one (older scanners).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE sessions ADD COLUMN run_id text`.execute(db);
}
