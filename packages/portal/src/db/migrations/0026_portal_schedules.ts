import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// Scan schedules kept by the portal (docs/agent.md "Schedules kept by the portal").
// A schedule belongs to one client and targets one agent or one group of that client (groups
// are (client_id, group_name) and may be empty when the schedule is made). An agent-targeted
// schedule goes with its agent when the agent is purged (the foreign key cascades).
//
// Delivery: heartbeats compare the client's revision with the one the agent holds, so the
// hot path reads one row by primary key. Triggers bump the revision on every change of a
// schedule and of a group membership, whichever path makes it (the API, a purge's cascade,
// a legacy agent moving to another client), so no writer can forget it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE agent_schedules (
      id text PRIMARY KEY,
      client_id text NOT NULL,
      agent_id text,
      group_name text,
      name text NOT NULL,
      description text,
      targets text NOT NULL,
      ports text,
      profile text,
      cron text NOT NULL,
      timezone text NOT NULL,
      upload boolean NOT NULL,
      enabled boolean NOT NULL,
      created_by text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT agent_schedules_one_target CHECK ((agent_id IS NULL) <> (group_name IS NULL)),
      CONSTRAINT agent_schedules_agent_fkey FOREIGN KEY (client_id, agent_id)
        REFERENCES agents (client_id, agent_id) ON DELETE CASCADE ON UPDATE CASCADE
    );
    CREATE INDEX agent_schedules_agent_idx ON agent_schedules (client_id, agent_id) WHERE agent_id IS NOT NULL;
    CREATE INDEX agent_schedules_group_idx ON agent_schedules (client_id, group_name) WHERE group_name IS NOT NULL;

    CREATE TABLE agent_schedule_revisions (
      client_id text PRIMARY KEY,
      revision bigint NOT NULL
    );

    CREATE FUNCTION agent_schedule_revision_bump() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP <> 'INSERT' THEN
        INSERT INTO agent_schedule_revisions AS r (client_id, revision) VALUES (OLD.client_id, 1)
          ON CONFLICT (client_id) DO UPDATE SET revision = r.revision + 1;
      END IF;
      IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.client_id IS DISTINCT FROM OLD.client_id) THEN
        INSERT INTO agent_schedule_revisions AS r (client_id, revision) VALUES (NEW.client_id, 1)
          ON CONFLICT (client_id) DO UPDATE SET revision = r.revision + 1;
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER agent_schedules_revision AFTER INSERT OR UPDATE OR DELETE ON agent_schedules
      FOR EACH ROW EXECUTE FUNCTION agent_schedule_revision_bump();
    CREATE TRIGGER agent_groups_schedule_revision AFTER INSERT OR UPDATE OR DELETE ON agent_groups
      FOR EACH ROW EXECUTE FUNCTION agent_schedule_revision_bump();
  `.execute(db);
}
