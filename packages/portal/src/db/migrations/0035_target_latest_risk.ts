import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// The overview's risk chart answers the targets whose newest scored scan scored highest. Finding
// them read every scored session of the window (130,000 index entries, 60 ms, at 200,000
// sessions), and the answer before this cut the series at 5,000 points in client order, so an
// MSP's later clients were missing. target_latest_risk keeps each target's newest scored
// session (newest scan, then the greater session id, as sessions_trend_idx orders them), kept
// by a trigger deferred to the commit like session_counts (migration 0029), so the chart ranks
// one row per target.
//
// A changed or deleted session that was the row's makes the row read again from
// sessions_trend_idx (the statement sees the change); then a new or changed scored session
// replaces the row when it is newer. Keyed by (client, target) with a target of NULL as one
// more target: a partial unique index, since NULLS NOT DISTINCT needs PostgreSQL 15.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE target_latest_risk (
      client_id  text             NOT NULL,
      target     text,
      session_id text             NOT NULL,
      scanned_at timestamptz      NOT NULL,
      risk_score double precision NOT NULL
    );
    CREATE UNIQUE INDEX target_latest_risk_key ON target_latest_risk (client_id, target);
    CREATE UNIQUE INDEX target_latest_risk_no_target_key ON target_latest_risk (client_id) WHERE target IS NULL;

    CREATE FUNCTION target_latest_risk_offer(c text, t text, s text, at timestamptz, score double precision)
      RETURNS void LANGUAGE plpgsql AS $$
      BEGIN
        IF t IS NULL THEN
          INSERT INTO target_latest_risk AS r VALUES (c, NULL, s, at, score)
            ON CONFLICT (client_id) WHERE target IS NULL DO UPDATE
              SET session_id = EXCLUDED.session_id, scanned_at = EXCLUDED.scanned_at, risk_score = EXCLUDED.risk_score
              WHERE (EXCLUDED.scanned_at, EXCLUDED.session_id) > (r.scanned_at, r.session_id);
        ELSE
          INSERT INTO target_latest_risk AS r VALUES (c, t, s, at, score)
            ON CONFLICT (client_id, target) DO UPDATE
              SET session_id = EXCLUDED.session_id, scanned_at = EXCLUDED.scanned_at, risk_score = EXCLUDED.risk_score
              WHERE (EXCLUDED.scanned_at, EXCLUDED.session_id) > (r.scanned_at, r.session_id);
        END IF;
      END
      $$;

    CREATE FUNCTION target_latest_risk_reread(c text, t text, s text)
      RETURNS void LANGUAGE plpgsql AS $$
      DECLARE
        n record;
      BEGIN
        IF t IS NULL THEN
          SELECT session_id, scanned_at, risk_score INTO n FROM sessions
            WHERE client_id = c AND target IS NULL AND risk_score IS NOT NULL
            ORDER BY scanned_at DESC, session_id DESC LIMIT 1;
        ELSE
          SELECT session_id, scanned_at, risk_score INTO n FROM sessions
            WHERE client_id = c AND target = t AND risk_score IS NOT NULL
            ORDER BY scanned_at DESC, session_id DESC LIMIT 1;
        END IF;
        IF n.session_id IS NULL THEN
          DELETE FROM target_latest_risk
            WHERE client_id = c AND target IS NOT DISTINCT FROM t AND session_id = s;
        ELSE
          UPDATE target_latest_risk SET session_id = n.session_id, scanned_at = n.scanned_at, risk_score = n.risk_score
            WHERE client_id = c AND target IS NOT DISTINCT FROM t AND session_id = s;
        END IF;
      END
      $$;

    CREATE FUNCTION sessions_latest_risk() RETURNS trigger
      LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP <> 'INSERT' THEN
          PERFORM target_latest_risk_reread(OLD.client_id, OLD.target, OLD.session_id);
        END IF;
        IF TG_OP <> 'DELETE' AND NEW.risk_score IS NOT NULL THEN
          PERFORM target_latest_risk_offer(NEW.client_id, NEW.target, NEW.session_id, NEW.scanned_at, NEW.risk_score);
        END IF;
        RETURN NULL;
      END
      $$;

    CREATE CONSTRAINT TRIGGER sessions_latest_risk
      AFTER INSERT OR DELETE OR UPDATE OF client_id, target, session_id, scanned_at, risk_score ON sessions
      DEFERRABLE INITIALLY DEFERRED
      FOR EACH ROW EXECUTE FUNCTION sessions_latest_risk();

    INSERT INTO target_latest_risk (client_id, target, session_id, scanned_at, risk_score)
      SELECT DISTINCT ON (client_id, target) client_id, target, session_id, scanned_at, risk_score
      FROM sessions WHERE risk_score IS NOT NULL
      ORDER BY client_id, target, scanned_at DESC, session_id DESC;
  `.execute(db);
}
