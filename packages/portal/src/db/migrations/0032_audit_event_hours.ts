import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// The audit log's exact total counted every event of its window (about
// 1,000,000 at 90 days, 130 ms) and db-health counted the whole table. Closed hours are counted
// once and kept: audit_event_hours (hour → events) and audit_event_type_hours (type, hour →
// events), for every hour before audit_event_hours_closed.until; the hours from `until` on are
// counted live. No row: nothing closed yet, everything is counted live.
//
// Exact under any write, without a counter row every writer would queue on:
// - a write (insert, delete, update, truncate) into an hour already closed adjusts that hour's
//   counts in its own transaction (statement triggers, rare: a transaction that started in the
//   hour before, a purge at the window's edge); writes into the open hour touch no count row;
// - audit_event_hours_close() moves `until` forward (the portal's hourly housekeeping and the
//   audit read call it; one closer at a time across replicas). Writers hold a shared lock on
//   their hours' slot until they commit, the closer takes it exclusively: it counts an hour only
//   once every writer into it committed, and a writer that comes later sees the hour closed and
//   adjusts it. Lock slots are hours modulo 64: a bulk write takes at most 64 locks.
// A writer into the current hour (nearly every write) only takes its slot's lock: the closer
// closes hours that ended 5 minutes before it began, so none can have closed it, even after a
// step back of the server's clock shorter than that. A write into an older hour reads
// `until` after the lock, which needs READ COMMITTED (a later statement sees the closer's
// commit); the trigger refuses it in any other isolation rather than count wrong.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE audit_event_hours (
      hour timestamptz PRIMARY KEY,
      n    bigint      NOT NULL
    );
    CREATE TABLE audit_event_type_hours (
      event_type text        NOT NULL,
      hour       timestamptz NOT NULL,
      n          bigint      NOT NULL,
      PRIMARY KEY (event_type, hour)
    );
    CREATE TABLE audit_event_hours_closed (
      one   boolean     PRIMARY KEY DEFAULT true CHECK (one),
      until timestamptz NOT NULL
    );

    -- Hours in absolute time, whatever the session's time zone.
    CREATE FUNCTION audit_hour(t timestamptz) RETURNS timestamptz
      LANGUAGE sql IMMUTABLE PARALLEL SAFE
      RETURN date_bin('1 hour', t, TIMESTAMPTZ '2000-01-01 00:00:00+00');
    CREATE FUNCTION audit_hour_slot(h timestamptz) RETURNS int
      LANGUAGE sql IMMUTABLE PARALLEL SAFE
      RETURN CASE WHEN isfinite(h) THEN ((floor(extract(epoch FROM h) / 3600)::bigint % 64 + 64) % 64)::int ELSE 0 END;

    -- Applies counted changes (type, hour, +/- events) to the closed hours among them.
    CREATE FUNCTION audit_event_hours_change(types text[], hours timestamptz[], deltas bigint[]) RETURNS void
      LANGUAGE plpgsql AS $$
      BEGIN
        IF current_setting('transaction_isolation') <> 'read committed' THEN
          RAISE EXCEPTION 'audit events are written in READ COMMITTED transactions only (their hourly counts rely on it)';
        END IF;
        PERFORM pg_advisory_xact_lock_shared(hashtext('svc.audit_event_hours'), s)
          FROM (SELECT DISTINCT audit_hour_slot(h) AS s FROM unnest(hours) h ORDER BY 1) x;
        WITH c AS (
          SELECT t, h, d FROM unnest(types, hours, deltas) AS u(t, h, d)
          WHERE h < (SELECT until FROM audit_event_hours_closed)
        ), by_type AS (
          INSERT INTO audit_event_type_hours AS a (event_type, hour, n)
            SELECT t, h, sum(d) FROM c GROUP BY t, h HAVING sum(d) <> 0
            ON CONFLICT (event_type, hour) DO UPDATE SET n = a.n + excluded.n
        )
        INSERT INTO audit_event_hours AS a (hour, n)
          SELECT h, sum(d) FROM c GROUP BY h HAVING sum(d) <> 0
          ON CONFLICT (hour) DO UPDATE SET n = a.n + excluded.n;
        IF EXISTS (SELECT 1 FROM unnest(deltas) d WHERE d < 0) THEN
          DELETE FROM audit_event_type_hours WHERE n = 0 AND hour = ANY(hours);
          DELETE FROM audit_event_hours WHERE n = 0 AND hour = ANY(hours);
        END IF;
      END
      $$;

    CREATE FUNCTION audit_events_counted() RETURNS trigger
      LANGUAGE plpgsql AS $$
      DECLARE lo timestamptz; hi timestamptz; first_hour timestamptz; types text[]; hours timestamptz[]; deltas bigint[];
      BEGIN
        IF TG_OP = 'INSERT' THEN
          -- The common case: the statement's events all in the current hour (or a later one), which
          -- no closer can have closed (a closer closes hours that ended 5 minutes before it began):
          -- its slot's lock, and nothing else.
          SELECT min(created_at), max(created_at) INTO lo, hi FROM new_rows;
          IF lo IS NULL THEN RETURN NULL; END IF;
          first_hour := audit_hour(lo);
          IF first_hour = audit_hour(hi) THEN
            IF NOT pg_try_advisory_xact_lock_shared(hashtext('svc.audit_event_hours'), audit_hour_slot(first_hour)) THEN
              PERFORM pg_advisory_xact_lock_shared(hashtext('svc.audit_event_hours'), audit_hour_slot(first_hour));
            END IF;
            IF first_hour >= audit_hour(clock_timestamp()) THEN RETURN NULL; END IF;
          END IF;
          SELECT array_agg(t), array_agg(h), array_agg(d) INTO types, hours, deltas FROM (
            SELECT event_type AS t, audit_hour(created_at) AS h, count(*) AS d FROM new_rows GROUP BY 1, 2) x;
        ELSIF TG_OP = 'DELETE' THEN
          SELECT array_agg(t), array_agg(h), array_agg(d) INTO types, hours, deltas FROM (
            SELECT event_type AS t, audit_hour(created_at) AS h, -count(*) AS d FROM old_rows GROUP BY 1, 2) x;
        ELSE
          SELECT array_agg(t), array_agg(h), array_agg(d) INTO types, hours, deltas FROM (
            SELECT t, h, sum(d) AS d FROM (
              SELECT event_type AS t, audit_hour(created_at) AS h, 1 AS d FROM new_rows
              UNION ALL
              SELECT event_type, audit_hour(created_at), -1 FROM old_rows) c
            GROUP BY 1, 2 HAVING sum(d) <> 0) x;
        END IF;
        IF hours IS NOT NULL THEN
          PERFORM audit_event_hours_change(types, hours, deltas);
        END IF;
        RETURN NULL;
      END
      $$;

    CREATE TRIGGER audit_events_counted_insert AFTER INSERT ON audit_events
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION audit_events_counted();
    CREATE TRIGGER audit_events_counted_delete AFTER DELETE ON audit_events
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION audit_events_counted();
    CREATE TRIGGER audit_events_counted_update AFTER UPDATE ON audit_events
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION audit_events_counted();

    CREATE FUNCTION audit_events_truncated() RETURNS trigger
      LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM audit_event_type_hours;
        DELETE FROM audit_event_hours;
        RETURN NULL;
      END
      $$;
    CREATE TRIGGER audit_events_truncated AFTER TRUNCATE ON audit_events
      FOR EACH STATEMENT EXECUTE FUNCTION audit_events_truncated();

    -- Counts the hours from until to the one 5 minutes ago (at most max_hours of them; all of
    -- them the first time), answers how many hours it closed; 0 when another closer is at work.
    -- The 5 minutes keep a writer of the current hour (which skips reading until, see the
    -- trigger) right across a step back of the server's clock shorter than them.
    CREATE FUNCTION audit_event_hours_close(max_hours int) RETURNS int
      LANGUAGE plpgsql AS $$
      DECLARE u timestamptz; v timestamptz := audit_hour(now() - interval '5 minutes');
      BEGIN
        SELECT until INTO u FROM audit_event_hours_closed;
        IF FOUND AND u >= v THEN RETURN 0; END IF;
        IF NOT pg_try_advisory_xact_lock(hashtext('svc.audit_event_hours'), 64) THEN RETURN 0; END IF;
        SELECT until INTO u FROM audit_event_hours_closed;
        IF FOUND AND u >= v THEN RETURN 0; END IF;
        IF FOUND THEN
          v := least(v, u + make_interval(hours => max_hours));
        ELSE
          u := '-infinity';
        END IF;
        IF NOT isfinite(u) OR v - u >= interval '64 hours' THEN
          PERFORM pg_advisory_xact_lock(hashtext('svc.audit_event_hours'), s) FROM generate_series(0, 63) s;
        ELSE
          PERFORM pg_advisory_xact_lock(hashtext('svc.audit_event_hours'), s) FROM (
            SELECT DISTINCT audit_hour_slot(h) AS s FROM generate_series(u, v - interval '1 hour', interval '1 hour') h
            ORDER BY 1) x;
        END IF;
        INSERT INTO audit_event_type_hours (event_type, hour, n)
          SELECT event_type, audit_hour(created_at), count(*) FROM audit_events
          WHERE created_at >= u AND created_at < v GROUP BY 1, 2;
        INSERT INTO audit_event_hours (hour, n)
          SELECT hour, sum(n) FROM audit_event_type_hours WHERE hour >= u AND hour < v GROUP BY 1;
        INSERT INTO audit_event_hours_closed (until) VALUES (v)
          ON CONFLICT (one) DO UPDATE SET until = excluded.until;
        RETURN CASE WHEN isfinite(u) THEN (extract(epoch FROM v - u) / 3600)::int ELSE 1 END;
      END
      $$;

  `.execute(db);
  // Existing events: every hour before the current one closed now, under the triggers' lock
  // (no writer in between). An empty log is left to the first closer.
  await sql`SELECT audit_event_hours_close(0) FROM (SELECT 1 FROM audit_events LIMIT 1) x`.execute(db);
}
