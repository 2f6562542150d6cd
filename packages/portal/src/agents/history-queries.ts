import type { Kysely, Selectable } from 'kysely';
import type { CommandStatus } from '@svc/protocol';
import type { AgentCommandResultsTable, AgentCommandsTable, Database } from '../db/schema.ts';

/**
 * The admin command history's SQL (GET /api/agent-commands?limit= and ?command_id=): read
 * only. Apart from agents/queries.ts, which holds the rest of the area's statements (it is at
 * its size ceiling, scripts/file-size-allow.json).
 */

type Db = Kysely<Database>;

/** A command with its agent's latest telemetry (null once the agent is purged), for the host name. */
export type CommandRow = Selectable<AgentCommandsTable> & { agent_system_info: Record<string, unknown> | null };

function commandsWithAgent(db: Db) {
  return db
    .selectFrom('agent_commands')
    .leftJoin('agents', (j) =>
      j
        .onRef('agents.client_id', '=', 'agent_commands.client_id')
        .onRef('agents.agent_id', '=', 'agent_commands.agent_id'),
    )
    .selectAll('agent_commands')
    .select('agents.system_info as agent_system_info');
}

/** Admin history, newest first, within `clientIds` (null: every client). */
export async function newestCommands(
  db: Db,
  clientIds: string[] | null,
  limit: number,
  status?: CommandStatus,
): Promise<CommandRow[]> {
  let q = commandsWithAgent(db);
  if (clientIds !== null) q = q.where('agent_commands.client_id', 'in', clientIds);
  if (status) q = q.where('agent_commands.status', '=', status);
  return q.orderBy('agent_commands.created_at', 'desc').orderBy('agent_commands.id', 'desc').limit(limit).execute();
}

export async function commandById(db: Db, id: string): Promise<CommandRow | undefined> {
  return commandsWithAgent(db).where('agent_commands.id', '=', id).executeTakeFirst();
}

export async function commandResult(db: Db, id: string): Promise<Selectable<AgentCommandResultsTable> | undefined> {
  return db.selectFrom('agent_command_results').selectAll().where('command_id', '=', id).executeTakeFirst();
}
