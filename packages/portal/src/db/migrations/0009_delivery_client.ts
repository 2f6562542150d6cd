import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// A delivery keeps the client of its event: who may list or redeliver it is decided by that
// client, not by the subscription's client_id of today, which an admin can change (a re-scoped
// subscription must not hand its old client's deliveries to the new one). Existing rows take
// the client_id the event's data names, else their subscription's client_id (the best record
// left of its client at the time); a ping names neither and stays with its subscription's.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE webhook_deliveries ADD COLUMN client_id text;

    UPDATE webhook_deliveries d
    SET client_id = COALESCE(d.body::jsonb -> 'data' ->> 'client_id', s.client_id)
    FROM webhook_subscriptions s
    WHERE s.id = d.subscription_id;
  `.execute(db);
}
