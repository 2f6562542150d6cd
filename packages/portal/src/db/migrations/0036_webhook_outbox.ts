import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// Webhook events of record (docs/decisions.md#webhook-events-are-staged-with-their-operation).
// An event's deliveries were written after the operation committed, so a process that stopped
// (or lost its database) between the two lost the event for good. Now the event is staged in
// webhook_outbox by the operation's own transaction: audited events by a statement trigger on
// audit_events (every path that writes them, the raw-SQL ones included), when an enabled
// subscription listens to it; report_expiring, which is not audited, with its body in `event`.
// The process that committed it fans it out and deletes the row in one statement; a row left
// longer than a lease is fanned out by a replica's sweep. The delete is the claim, so one fan-out
// happens, whoever gets there. audit_id is no foreign key: a staged row lives seconds, and one
// would forbid TRUNCATE of audit_events (which migration 0032's trigger provides for); a row whose
// audit event went is dropped by the sweep.
//
// body_sealed: a delivery whose event carries a secret (scan_completed's share link) keeps its
// body with the secret redacted, and the whole body only sealed under the key-encryption key,
// like the share tokens themselves (migration 0020): a backup holds no share token in clear.
// Bodies written before (or by a replica of the older version during a rolling upgrade) are
// sealed by the next start (webhooks/secrets.ts sealStoredBodies).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE webhook_deliveries ADD COLUMN body_sealed text;
    -- What each start looks through for bodies an older version wrote with the token in clear.
    CREATE INDEX webhook_deliveries_unsealed_idx ON webhook_deliveries (id)
      WHERE body_sealed IS NULL AND event_type = 'scan_completed';

    CREATE TABLE webhook_outbox (
      id         bigserial PRIMARY KEY,
      audit_id   bigint UNIQUE,
      event      jsonb,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      CHECK ((audit_id IS NULL) <> (event IS NULL))
    );
    CREATE INDEX webhook_outbox_created_idx ON webhook_outbox (created_at);

    CREATE FUNCTION webhook_outbox_stage_audited() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO webhook_outbox (audit_id)
      SELECT n.id FROM staged_audit n
      WHERE EXISTS (
        SELECT 1 FROM webhook_subscriptions s
        WHERE s.enabled AND n.event_type = ANY(s.event_types)
          AND (s.client_id IS NULL OR s.client_id = n.client_id));
      RETURN NULL;
    END $$;
    CREATE TRIGGER webhook_outbox_stage_audited AFTER INSERT ON audit_events
      REFERENCING NEW TABLE AS staged_audit
      FOR EACH STATEMENT EXECUTE FUNCTION webhook_outbox_stage_audited();
  `.execute(db);
}
