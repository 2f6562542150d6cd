import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// The sessions listing's search (`q`: part of the target, the client's name or
// its id, any case) read every session. A trigram index per searched expression lets PostgreSQL
// answer the three LIKEs with a bitmap OR of index scans; the expressions are the ones
// sessions/queries.ts writes, so the planner matches them. pg_trgm is a trusted extension (any
// user who may create in the database installs it); where the portal's user may not, or the
// server lacks it, the indexes are left out and the search reads every session as before.
// The listing's other orders (sessions/queries.ts SORTS) get an index each, keyed like the
// upload-time one (the order's expression, then session and client id, for the cursor), so an
// admin's first page of any order reads one page of an index, not every session.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE INDEX sessions_sort_scanned_idx ON sessions (scanned_at DESC, session_id DESC, client_id DESC);
    CREATE INDEX sessions_sort_target_idx ON sessions (lower(COALESCE(target, '')) DESC, session_id DESC, client_id DESC);
    CREATE INDEX sessions_sort_client_idx ON sessions (lower(COALESCE(client, client_id)) DESC, session_id DESC, client_id DESC);
    CREATE INDEX sessions_sort_risk_idx ON sessions (COALESCE(risk_score, -1) DESC, session_id DESC, client_id DESC);
    CREATE INDEX sessions_sort_status_idx ON sessions (
      (CASE status WHEN 'new' THEN 0 WHEN 'in_review' THEN 1 WHEN 'resolved' THEN 2 ELSE 3 END) DESC,
      session_id DESC, client_id DESC);
  `.execute(db);
  await sql`
    DO $$
    BEGIN
      BEGIN
        CREATE EXTENSION IF NOT EXISTS pg_trgm;
      EXCEPTION WHEN insufficient_privilege OR undefined_file OR feature_not_supported THEN
        RAISE NOTICE 'pg_trgm is not available (%): the sessions search reads every session', SQLERRM;
        RETURN;
      END;
      CREATE INDEX sessions_search_target_idx ON sessions USING gin (lower(COALESCE(target, '')) gin_trgm_ops);
      CREATE INDEX sessions_search_client_idx ON sessions USING gin (lower(COALESCE(client, '')) gin_trgm_ops);
      CREATE INDEX sessions_search_client_id_idx ON sessions USING gin (lower(client_id) gin_trgm_ops);
    END
    $$;
  `.execute(db);
}
