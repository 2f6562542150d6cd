import type { Selectable } from 'kysely';
import type { CommandRecord, CommandStatus, CommandType } from '@svc/protocol';
import type { UserPrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import type { AgentCommandResultsTable, AgentCommandsTable } from '../db/schema.ts';
import { notFound } from '../http/errors.ts';
import { clientOut } from './resolve.ts';

function presentCommand(row: Selectable<AgentCommandsTable>): CommandRecord {
  return {
    id: Number(row.id),
    agent_id: row.agent_id,
    client_id: clientOut(row.client_id),
    command_type: row.command_type as CommandType,
    payload: row.payload,
    priority: row.priority,
    created_by: row.created_by,
    group_target: row.group_target,
    status: row.status,
    created_at: row.created_at.toISOString(),
    sent_at: row.sent_at?.toISOString() ?? null,
    acked_at: row.acked_at?.toISOString() ?? null,
    completed_at: row.completed_at?.toISOString() ?? null,
  };
}

function presentResult(row: Selectable<AgentCommandResultsTable>) {
  return {
    exit_code: row.exit_code,
    stdout: row.stdout,
    stderr: row.stderr,
    session_id: row.session_id,
    // SPEC: session_id links to the session detail view.
    session_url: row.session_id === null ? null : `/collect/?session=${encodeURIComponent(row.session_id)}`,
    completed_at: row.completed_at.toISOString(),
  };
}

/** Admin history, newest first; scoped users see commands of their clients' agents only. */
export async function listCommands(
  ctx: AppContext,
  user: UserPrincipal,
  limit: number,
  status?: CommandStatus,
): Promise<CommandRecord[]> {
  let q = ctx.db.selectFrom('agent_commands').selectAll('agent_commands');
  if (user.clientIds !== null) {
    if (user.clientIds.length === 0) return [];
    q = q.where('agent_commands.client_id', 'in', user.clientIds);
  }
  if (status) q = q.where('agent_commands.status', '=', status);
  const rows = await q
    .orderBy('agent_commands.created_at', 'desc')
    .orderBy('agent_commands.id', 'desc')
    .limit(limit)
    .execute();
  return rows.map(presentCommand);
}

export async function commandDetail(ctx: AppContext, user: UserPrincipal, id: number) {
  // Ids are bigserial: one past 2^53 (or past bigint) cannot exist, and must not reach SQL as an out-of-range literal.
  if (!Number.isSafeInteger(id)) throw notFound('Command not found');
  const row = await ctx.db.selectFrom('agent_commands').selectAll().where('id', '=', String(id)).executeTakeFirst();
  if (!row) throw notFound('Command not found');
  // A command carries its agent's client (the agent is (client_id, agent_id)).
  if (user.clientIds !== null && !user.clientIds.includes(row.client_id)) throw notFound('Command not found');
  const result = await ctx.db
    .selectFrom('agent_command_results')
    .selectAll()
    .where('command_id', '=', row.id)
    .executeTakeFirst();
  return { command: presentCommand(row), result: result ? presentResult(result) : null };
}
