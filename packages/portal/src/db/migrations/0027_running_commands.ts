import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// The fleet listing shows what each agent of a page runs now (its acked commands).
// A partial index keeps that lookup to the few running commands, however long an agent's
// command history grows. A progress report may name the stage of svc scan's pipeline
// (protocol PROGRESS_STAGES, checked there): null for reports without one.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE agent_commands ADD COLUMN progress_stage text;
    CREATE INDEX agent_commands_acked_idx ON agent_commands (client_id, agent_id, acked_at, id) WHERE status = 'acked';
  `.execute(db);
}
