import type { AgentView } from '@svc/protocol';
import type { UserPrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { presentAgent } from './present.ts';

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
  let q = ctx.db.selectFrom('agents').selectAll().where('deregistered_at', 'is', null);
  if (user.clientIds !== null) {
    if (user.clientIds.length === 0) return { agents: [], next_cursor: null };
    q = q.where('client_id', 'in', user.clientIds);
  }
  const rows = await (cursor !== undefined ? q.where('agent_id', '>', cursor) : q)
    .orderBy('agent_id')
    .orderBy('client_id')
    .limit(limit + 1)
    .execute();
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  let more = rows.length > limit;
  if (more && last !== undefined && rows[limit]?.agent_id === last.agent_id) {
    page.push(
      ...(await q
        .where('agent_id', '=', last.agent_id)
        .where('client_id', '>', last.client_id)
        .orderBy('client_id')
        .execute()),
    );
    more = (await q.where('agent_id', '>', last.agent_id).select('agent_id').limit(1).executeTakeFirst()) !== undefined;
  }
  const now = ctx.now();
  return { agents: page.map((r) => presentAgent(r, now)), next_cursor: more ? (last?.agent_id ?? null) : null };
}
