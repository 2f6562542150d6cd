import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
/**
 * Agent ids are unique per client, not per portal (docs/api.md#ids-are-per-client): md5(hostname) collides across
 * customers (every `raspberrypi`). Agents become keyed by (client_id, agent_id), and the
 * commands and group memberships that name an agent carry its client. Existing rows are
 * kept: an agent without a client (registered by the legacy key without a client_id) moves
 * to the unnamed namespace '' (shown as client_id null).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE agent_commands DROP CONSTRAINT agent_commands_agent_id_fkey;
    ALTER TABLE agent_groups DROP CONSTRAINT agent_groups_agent_id_fkey;

    UPDATE agents SET client_id = '' WHERE client_id IS NULL;
    ALTER TABLE agents ALTER COLUMN client_id SET NOT NULL;
    ALTER TABLE agents DROP CONSTRAINT agents_pkey;
    ALTER TABLE agents ADD PRIMARY KEY (client_id, agent_id);
    DROP INDEX agents_client_idx;
    -- Admin requests name an agent by id and may not name its client; the fleet pages by (agent_id, client_id).
    CREATE INDEX agents_agent_idx ON agents (agent_id, client_id);
    -- The legacy key has no client: the agents it registered (license_id null) are found by
    -- id alone, so their ids stay unique among themselves (docs/api.md#credentials).
    CREATE UNIQUE INDEX agents_legacy_agent_key ON agents (agent_id) WHERE license_id IS NULL;

    ALTER TABLE agent_commands ADD COLUMN client_id text;
    UPDATE agent_commands c SET client_id = a.client_id FROM agents a WHERE a.agent_id = c.agent_id;
    ALTER TABLE agent_commands ALTER COLUMN client_id SET NOT NULL;
    -- ON UPDATE CASCADE: a legacy agent follows the client_id its daemon reports.
    ALTER TABLE agent_commands ADD CONSTRAINT agent_commands_agent_fkey
      FOREIGN KEY (client_id, agent_id) REFERENCES agents (client_id, agent_id) ON DELETE CASCADE ON UPDATE CASCADE;
    DROP INDEX agent_commands_pending_idx;
    DROP INDEX agent_commands_agent_idx;
    CREATE INDEX agent_commands_pending_idx ON agent_commands (client_id, agent_id, priority DESC, created_at, id) WHERE status = 'pending';
    CREATE INDEX agent_commands_agent_idx ON agent_commands (client_id, agent_id, id);

    ALTER TABLE agent_groups ADD COLUMN client_id text;
    UPDATE agent_groups g SET client_id = a.client_id FROM agents a WHERE a.agent_id = g.agent_id;
    ALTER TABLE agent_groups ALTER COLUMN client_id SET NOT NULL;
    ALTER TABLE agent_groups DROP CONSTRAINT agent_groups_pkey;
    -- A group is (client_id, group_name): one client's group never holds another's agents.
    ALTER TABLE agent_groups ADD PRIMARY KEY (client_id, group_name, agent_id);
    ALTER TABLE agent_groups ADD CONSTRAINT agent_groups_agent_fkey
      FOREIGN KEY (client_id, agent_id) REFERENCES agents (client_id, agent_id) ON DELETE CASCADE ON UPDATE CASCADE;
    DROP INDEX agent_groups_agent_idx;
    CREATE INDEX agent_groups_agent_idx ON agent_groups (client_id, agent_id);
    -- A broadcast names the group only: find its clients.
    CREATE INDEX agent_groups_name_idx ON agent_groups (group_name, client_id);
  `.execute(db);
}
