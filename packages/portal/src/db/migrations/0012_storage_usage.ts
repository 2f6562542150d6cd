import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// Storage is limited per client and in total (SVC_CLIENT_STORAGE_LIMIT_MB,
// SVC_STORAGE_LIMIT_MB). The bytes of each client's stored session files are kept in
// storage_usage by a trigger on sessions, so every path that writes a row's `files`
// (upload, refresh, remediation update, delete, the retention sweep) keeps the count right,
// and a limit check reads one row instead of summing every session. The trigger's upsert
// locks the client's row until commit, which serialises concurrent uploads of one client.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE storage_usage (
      client_id text PRIMARY KEY,
      bytes bigint NOT NULL DEFAULT 0
    );

    CREATE FUNCTION session_files_bytes(files jsonb) RETURNS bigint
      LANGUAGE sql IMMUTABLE AS $$
        SELECT COALESCE(SUM((value->>'size')::bigint), 0) FROM jsonb_each(COALESCE(files, '{}'::jsonb))
      $$;

    CREATE FUNCTION sessions_storage_usage() RETURNS trigger
      LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP IN ('UPDATE', 'DELETE') THEN
          UPDATE storage_usage SET bytes = bytes - session_files_bytes(OLD.files)
            WHERE client_id = OLD.client_id;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
          INSERT INTO storage_usage (client_id, bytes) VALUES (NEW.client_id, session_files_bytes(NEW.files))
            ON CONFLICT (client_id) DO UPDATE SET bytes = storage_usage.bytes + EXCLUDED.bytes;
        END IF;
        RETURN NULL;
      END
      $$;

    CREATE TRIGGER sessions_storage_usage
      AFTER INSERT OR DELETE OR UPDATE OF files, client_id ON sessions
      FOR EACH ROW EXECUTE FUNCTION sessions_storage_usage();

    INSERT INTO storage_usage (client_id, bytes)
      SELECT client_id, SUM(session_files_bytes(files)) FROM sessions GROUP BY client_id;
  `.execute(db);
}
