import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// Issue 37: the fleet listing shows what each agent of a page runs now (its acked commands).
// A partial index keeps that lookup to the few running commands, however long an agent's
// command history grows.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE INDEX agent_commands_acked_idx ON agent_commands (client_id, agent_id, acked_at, id) WHERE status = 'acked';
  `.execute(db);
}
