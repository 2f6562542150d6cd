import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// A delivery in flight when its replica dies no longer stays `pending` for good
// (docs/decisions.md#a-lease-per-delivery-in-flight). Each delivery in flight
// has a lease: the replica sending it (claimed_by) renews claimed_until while it runs, and
// deletes the lease with the outcome. A lease that expires belongs to a replica that stopped:
// any replica takes the delivery over (a new run, `runs` + 1) or, after SVC_WEBHOOK_MAX_RUNS
// runs, marks it `abandoned`.
//
// The leases live in their own table rather than in columns of webhook_deliveries: finding
// the expired ones needs an index over the deliveries in flight, and an index whose predicate
// or columns the finishing UPDATE changes would end that UPDATE's HOT path (0005's
// fillfactor), which every delivery takes. This table holds only the deliveries in flight.
//
// Deliveries still pending now were left by crashes of earlier versions, or are on their way
// from a replica of the earlier version that is still running: they get a lease that expires
// ten minutes from now (time for such a replica to finish them), then the rules above apply.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE webhook_deliveries ADD COLUMN runs integer NOT NULL DEFAULT 1;
    ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_status_check;
    ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_status_check
      CHECK (status IN ('pending', 'succeeded', 'failed', 'abandoned'));

    CREATE TABLE webhook_delivery_leases (
      delivery_id   bigint PRIMARY KEY REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
      claimed_by    text NOT NULL,
      claimed_until timestamptz NOT NULL
    );
    CREATE INDEX webhook_delivery_leases_until_idx ON webhook_delivery_leases (claimed_until);

    INSERT INTO webhook_delivery_leases (delivery_id, claimed_by, claimed_until)
    SELECT id, 'before-0019', now() + interval '10 minutes' FROM webhook_deliveries WHERE status = 'pending';
  `.execute(db);
}
