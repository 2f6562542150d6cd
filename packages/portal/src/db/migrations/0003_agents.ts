import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- One row per agent: its registration and its latest heartbeat, so the common
    -- heartbeat is a single-row update.
    CREATE TABLE agents (
      agent_id        text PRIMARY KEY,
      client_id       text,
      license_id      text,
      key_tier        text NOT NULL CHECK (key_tier IN ('professional', 'business', 'msp')),
      version         text NOT NULL,
      sent_at         timestamptz NOT NULL,
      status          text NOT NULL,
      uptime_seconds  double precision NOT NULL,
      schedules       jsonb,
      system_info     jsonb,
      received_at     timestamptz NOT NULL,
      first_seen_at   timestamptz NOT NULL,
      deregistered_at timestamptz
    );
    CREATE INDEX agents_client_idx ON agents (client_id, agent_id);
    CREATE INDEX agents_license_active_idx ON agents (license_id) WHERE deregistered_at IS NULL;

    CREATE TABLE agent_commands (
      id           bigserial PRIMARY KEY,
      agent_id     text NOT NULL REFERENCES agents(agent_id) ON DELETE CASCADE,
      command_type text NOT NULL,
      payload      jsonb NOT NULL DEFAULT '{}',
      priority     smallint NOT NULL CHECK (priority BETWEEN 0 AND 10),
      created_by   text NOT NULL,
      group_target text,
      status       text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'acked', 'completed', 'failed')),
      created_at   timestamptz NOT NULL DEFAULT now(),
      sent_at      timestamptz,
      acked_at     timestamptz,
      completed_at timestamptz
    );
    -- The claim path: an agent's pending commands in delivery order.
    CREATE INDEX agent_commands_pending_idx ON agent_commands (agent_id, priority DESC, created_at, id) WHERE status = 'pending';
    CREATE INDEX agent_commands_agent_idx ON agent_commands (agent_id, id);
    CREATE INDEX agent_commands_created_idx ON agent_commands (created_at DESC, id DESC);

    CREATE TABLE agent_command_results (
      command_id   bigint PRIMARY KEY REFERENCES agent_commands(id) ON DELETE CASCADE,
      exit_code    integer,
      stdout       text NOT NULL DEFAULT '',
      stderr       text NOT NULL DEFAULT '',
      session_id   text,
      completed_at timestamptz NOT NULL
    );

    CREATE TABLE agent_groups (
      group_name text NOT NULL,
      agent_id   text NOT NULL REFERENCES agents(agent_id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (group_name, agent_id)
    );
    CREATE INDEX agent_groups_agent_idx ON agent_groups (agent_id);
  `.execute(db);
}
