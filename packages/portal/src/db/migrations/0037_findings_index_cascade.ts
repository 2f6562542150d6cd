import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// A session's findings index (session_findings, session_finding_details) is a cache of its
// stored file, written only by sessions/findings-index-queries.ts right after the state row it hangs
// from, in the same transaction. Its foreign keys checked that row once per inserted row, a
// lookup and a row lock each: on a 10,000-finding upload 20,000 checks of the same row, a
// quarter of what PostgreSQL spent writing the index (bench/README.md, "Sessions of many
// findings"). The cascade they gave stays, as one statement per statement that deletes state
// rows (a trigger with a transition table), so deleting a session or its state row still takes
// its index with it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE session_findings DROP CONSTRAINT session_findings_client_id_session_id_fkey;
    ALTER TABLE session_finding_details DROP CONSTRAINT session_finding_details_client_id_session_id_fkey;

    CREATE FUNCTION session_findings_state_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM session_findings f USING gone g
       WHERE f.client_id = g.client_id AND f.session_id = g.session_id;
      DELETE FROM session_finding_details d USING gone g
       WHERE d.client_id = g.client_id AND d.session_id = g.session_id;
      RETURN NULL;
    END $$;
    CREATE TRIGGER session_findings_state_deleted AFTER DELETE ON session_findings_state
      REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION session_findings_state_deleted();
  `.execute(db);
}
