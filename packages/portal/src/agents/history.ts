import type { CommandRecord, CommandStatus } from '@svc/protocol';
import type { UserPrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { DomainError } from '../domain/errors.ts';
import { presentCommand, presentResult } from './present.ts';

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

const commandNotFound = () => new DomainError('not_found.command', 'Command not found');

export async function commandDetail(ctx: AppContext, user: UserPrincipal, id: number) {
  // Ids are bigserial: one past 2^53 (or past bigint) cannot exist, and must not reach SQL as an out-of-range literal.
  if (!Number.isSafeInteger(id)) throw commandNotFound();
  const row = await ctx.db.selectFrom('agent_commands').selectAll().where('id', '=', String(id)).executeTakeFirst();
  if (!row) throw commandNotFound();
  // A command carries its agent's client (the agent is (client_id, agent_id)).
  if (user.clientIds !== null && !user.clientIds.includes(row.client_id)) throw commandNotFound();
  const result = await ctx.db
    .selectFrom('agent_command_results')
    .selectAll()
    .where('command_id', '=', row.id)
    .executeTakeFirst();
  return { command: presentCommand(row), result: result ? presentResult(result) : null };
}
