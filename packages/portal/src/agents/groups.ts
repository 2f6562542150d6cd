import type { UserPrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { conflict, notFound } from '../errors.ts';

/** Group name → members; scoped users see their clients' agents only. */
export async function listGroups(ctx: AppContext, user: UserPrincipal): Promise<Record<string, { agent_id: string; created_at: string }[]>> {
  let q = ctx.db.selectFrom('agent_groups').innerJoin('agents', 'agents.agent_id', 'agent_groups.agent_id').select(['agent_groups.group_name', 'agent_groups.agent_id', 'agent_groups.created_at']);
  if (user.clientIds !== null) {
    if (user.clientIds.length === 0) return {};
    q = q.where('agents.client_id', 'in', user.clientIds);
  }
  const groups: Record<string, { agent_id: string; created_at: string }[]> = {};
  for (const r of await q.orderBy('agent_groups.group_name').orderBy('agent_groups.agent_id').execute()) {
    (groups[r.group_name] ??= []).push({ agent_id: r.agent_id, created_at: r.created_at.toISOString() });
  }
  return groups;
}

async function agentInScope(ctx: AppContext, user: UserPrincipal, agentId: string) {
  const agent = await ctx.db.selectFrom('agents').select(['agent_id', 'client_id', 'deregistered_at']).where('agent_id', '=', agentId).executeTakeFirst();
  if (!agent || (user.clientIds !== null && (agent.client_id === null || !user.clientIds.includes(agent.client_id)))) throw notFound('Agent not found');
  return agent;
}

export async function addToGroup(ctx: AppContext, user: UserPrincipal, agentId: string, group: string): Promise<Date> {
  const agent = await agentInScope(ctx, user, agentId);
  if (agent.deregistered_at) throw conflict('Agent is deregistered');
  const now = ctx.now();
  const row = await ctx.db
    .insertInto('agent_groups')
    .values({ group_name: group, agent_id: agentId, created_at: now })
    .onConflict((oc) => oc.columns(['group_name', 'agent_id']).doNothing())
    .returning('created_at')
    .executeTakeFirst();
  if (!row) throw conflict('Agent is already a member of this group');
  return row.created_at;
}

export async function removeFromGroup(ctx: AppContext, user: UserPrincipal, agentId: string, group: string): Promise<void> {
  await agentInScope(ctx, user, agentId);
  const res = await ctx.db.deleteFrom('agent_groups').where('group_name', '=', group).where('agent_id', '=', agentId).executeTakeFirst();
  if (Number(res.numDeletedRows) === 0) throw notFound('Agent is not a member of this group');
}
