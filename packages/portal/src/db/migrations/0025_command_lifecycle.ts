import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// Commands end even when nobody reports on them (docs/agent/commands.md, "Cancel,
// expiry and redelivery"). Every command gets an expiry (the portal sets it at queue time;
// rows queued before this migration expire 24 hours after they were queued, the default), and
// a running command remembers a cancellation asked of its agent (when, by whom, why) until the
// agent confirms it. The indexes keep the heartbeat's look for a cancellation and the sweep's
// look for expired and unconfirmed commands to a probe of a few rows.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE agent_commands
      ADD COLUMN expires_at timestamptz,
      ADD COLUMN cancel_requested_at timestamptz,
      ADD COLUMN cancel_requested_by text,
      ADD COLUMN cancel_reason text,
      ADD CONSTRAINT agent_commands_cancel_whole CHECK ((cancel_requested_at IS NULL) = (cancel_requested_by IS NULL));
    UPDATE agent_commands SET expires_at = created_at + interval '24 hours';
    ALTER TABLE agent_commands
      ALTER COLUMN expires_at SET DEFAULT now() + interval '24 hours',
      ALTER COLUMN expires_at SET NOT NULL;
    CREATE INDEX agent_commands_sent_idx ON agent_commands (client_id, agent_id, sent_at) WHERE status = 'sent';
    CREATE INDEX agent_commands_undelivered_expiry_idx ON agent_commands (expires_at) WHERE status IN ('pending', 'sent');
    CREATE INDEX agent_commands_cancel_idx ON agent_commands (client_id, agent_id, id)
      WHERE status = 'acked' AND cancel_requested_at IS NOT NULL;
    CREATE INDEX agent_commands_cancel_due_idx ON agent_commands (cancel_requested_at)
      WHERE status = 'acked' AND cancel_requested_at IS NOT NULL;
  `.execute(db);
}
