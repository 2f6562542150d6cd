import type { AgentView } from '@svc/protocol';
import type { UserPrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { presentAgent } from './present.ts';
import { registeredAgentsPage } from './queries.ts';

/**
 * The fleet view: registered agents only, in (agent_id, client_id) order, paged by agent_id.
 * One agent id may exist under several clients (D17): a page never ends between them, so
 * it may run over `limit` by the number of clients sharing its last id.
 */
export async function listAgents(
  ctx: AppContext,
  user: UserPrincipal,
  limit: number,
  cursor?: string,
): Promise<{ agents: AgentView[]; next_cursor: string | null }> {
  if (user.clientIds !== null && user.clientIds.length === 0) return { agents: [], next_cursor: null };
  const { rows, more } = await registeredAgentsPage(ctx.db, user.clientIds, limit, cursor);
  const now = ctx.now();
  return {
    agents: rows.map((r) => presentAgent(r, now)),
    next_cursor: more ? (rows.at(-1)?.agent_id ?? null) : null,
  };
}
