import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// The sessions listing's total, db-health's session count and its counts by
// status and by client counted every session on each read (tens of ms at 200,000 sessions).
// session_counts keeps how many sessions each client has in each status, kept by a trigger in
// the writing transaction, so those reads sum at most (clients × 4) rows. Rows left at 0 stay.
// The trigger is deferred to the commit: a counter row is locked only while its transaction
// commits, so two uploads of one client (different keys) never wait on each other's whole
// transaction, only on each other's commit.
// A status change moves one count to another in a single UPDATE (both rows, locked in key
// order), so two opposite changes of one client cannot deadlock on them.
// Also: the listing filtered by exact target (no client) scanned a client-first index, and
// db-health's client name per client read every session of the client, and every listing looked
// for sessions to notify of their expiry among all those in the notice window, notified or not.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE session_counts (
      client_id text   NOT NULL,
      status    text   NOT NULL,
      n         bigint NOT NULL,
      PRIMARY KEY (client_id, status)
    );

    CREATE FUNCTION sessions_count() RETURNS trigger
      LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          INSERT INTO session_counts (client_id, status, n) VALUES (NEW.client_id, NEW.status, 1)
            ON CONFLICT (client_id, status) DO UPDATE SET n = session_counts.n + 1;
        ELSIF TG_OP = 'DELETE' THEN
          UPDATE session_counts SET n = n - 1 WHERE client_id = OLD.client_id AND status = OLD.status;
        ELSIF (OLD.client_id, OLD.status) IS DISTINCT FROM (NEW.client_id, NEW.status) THEN
          INSERT INTO session_counts (client_id, status, n) VALUES (NEW.client_id, NEW.status, 0)
            ON CONFLICT (client_id, status) DO NOTHING;
          UPDATE session_counts c
            SET n = c.n + CASE WHEN (c.client_id, c.status) = (NEW.client_id, NEW.status) THEN 1 ELSE -1 END
            FROM (SELECT client_id, status FROM session_counts
                  WHERE (client_id, status) IN ((OLD.client_id, OLD.status), (NEW.client_id, NEW.status))
                  ORDER BY client_id, status FOR UPDATE) k
            WHERE (c.client_id, c.status) = (k.client_id, k.status);
        END IF;
        RETURN NULL;
      END
      $$;

    CREATE CONSTRAINT TRIGGER sessions_count
      AFTER INSERT OR DELETE OR UPDATE OF client_id, status ON sessions
      DEFERRABLE INITIALLY DEFERRED
      FOR EACH ROW EXECUTE FUNCTION sessions_count();

    INSERT INTO session_counts (client_id, status, n)
      SELECT client_id, status, count(*) FROM sessions GROUP BY client_id, status;

    CREATE INDEX sessions_target_uploaded_idx ON sessions (target, uploaded_at DESC, session_id DESC, client_id DESC);
    CREATE INDEX sessions_client_name_idx ON sessions (client_id, client);
    CREATE INDEX sessions_expiry_unnotified_idx ON sessions (expires_at) WHERE expiry_notified_at IS NULL;
  `.execute(db);
}
