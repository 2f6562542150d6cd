import type { CommandRecord, CommandStatus } from '@svc/protocol';
import type { UserPrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { DomainError } from '../domain/errors.ts';
import { presentCommand, presentResult } from './present.ts';
import { clientOut } from './resolve.ts';
import { commandById, commandResult, newestCommands } from './history-queries.ts';

const commandNotFound = () => new DomainError('not_found.command', 'Command not found');

/** Admin history, newest first; scoped users see commands of their clients' agents only. */
export async function listCommands(
  ctx: AppContext,
  user: UserPrincipal,
  limit: number,
  status?: CommandStatus,
): Promise<CommandRecord[]> {
  if (user.clientIds !== null && user.clientIds.length === 0) return [];
  return (await newestCommands(ctx.db, user.clientIds, limit, status)).map(presentCommand);
}

export async function commandDetail(ctx: AppContext, user: UserPrincipal, id: number) {
  // Ids are bigserial: one past 2^53 (or past bigint) cannot exist, and must not reach SQL as an out-of-range literal.
  if (!Number.isSafeInteger(id)) throw commandNotFound();
  const row = await commandById(ctx.db, String(id));
  if (!row) throw commandNotFound();
  // A command carries its agent's client (the agent is (client_id, agent_id)).
  if (user.clientIds !== null && !user.clientIds.includes(row.client_id)) throw commandNotFound();
  const result = await commandResult(ctx.db, row.id);
  return { command: presentCommand(row), result: result ? presentResult(result, clientOut(row.client_id)) : null };
}
