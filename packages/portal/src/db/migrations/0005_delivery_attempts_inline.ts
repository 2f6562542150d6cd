import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// A delivery's attempts (at most two, written once when the delivery finishes) move into
// the delivery row as a JSON array in the API's own shape. Finishing a fan-out to 50
// receivers then updates 50 rows instead of also inserting 50-100 attempt rows, each with
// a foreign-key check and a primary-key index entry (see
// docs/decisions.md#the-delivery-log-is-written-in-batches).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE webhook_deliveries ADD COLUMN attempts jsonb NOT NULL DEFAULT '[]'::jsonb;

    UPDATE webhook_deliveries d
    SET attempts = a.attempts
    FROM (
      SELECT delivery_id,
             jsonb_agg(jsonb_build_object(
               'attempt', attempt,
               'status_code', status_code,
               'duration_ms', duration_ms,
               'error', error,
               'attempted_at', to_char(attempted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
             ) ORDER BY attempt) AS attempts
      FROM webhook_delivery_attempts
      GROUP BY delivery_id
    ) a
    WHERE a.delivery_id = d.id;

    DROP TABLE webhook_delivery_attempts;

    -- Every row is written twice (pending, then finished with its attempts): room for the
    -- second version in the same page lets PostgreSQL make that update a HOT update, which
    -- touches no index.
    ALTER TABLE webhook_deliveries SET (fillfactor = 45);
  `.execute(db);
}
