import type { UserPrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { DomainError } from '../domain/errors.ts';
import { presentMember } from './present.ts';
import { AGENT_DEREGISTERED, agentForUser, clientOut } from './resolve.ts';

type Member = { agent_id: string; client_id: string | null; created_at: string };

/**
 * Group name → members; scoped users see their clients' agents only. A group is
 * (client_id, group_name): the same name under two clients lists both clients' members,
 * each with its client_id.
 */
export async function listGroups(ctx: AppContext, user: UserPrincipal): Promise<Record<string, Member[]>> {
  let q = ctx.db.selectFrom('agent_groups').select(['group_name', 'client_id', 'agent_id', 'created_at']);
  if (user.clientIds !== null) {
    if (user.clientIds.length === 0) return {};
    q = q.where('client_id', 'in', user.clientIds);
  }
  const groups: Record<string, Member[]> = {};
  for (const r of await q.orderBy('group_name').orderBy('agent_id').orderBy('client_id').execute()) {
    const members = groups[r.group_name] ?? [];
    members.push(presentMember(r));
    groups[r.group_name] = members;
  }
  return groups;
}

/**
 * Join the agent's own client's group of that name (created on its first member). The
 * agent must be one the user sees, so a scoped user can only ever build groups of its own
 * clients' agents, and never joins a group another client uses.
 */
export async function addToGroup(
  ctx: AppContext,
  user: UserPrincipal,
  agentId: string,
  clientId: string | null | undefined,
  group: string,
): Promise<{ clientId: string | null; createdAt: Date }> {
  const agent = await agentForUser(ctx.db, user, agentId, clientId);
  if (agent.deregistered_at) throw new DomainError('conflict.agent_deregistered', AGENT_DEREGISTERED);
  const now = ctx.now();
  const row = await ctx.db
    .insertInto('agent_groups')
    .values({ client_id: agent.client_id, group_name: group, agent_id: agentId, created_at: now })
    .onConflict((oc) => oc.columns(['client_id', 'group_name', 'agent_id']).doNothing())
    .returning('created_at')
    .executeTakeFirst();
  if (!row) throw new DomainError('conflict.group_member', 'Agent is already a member of this group');
  return { clientId: clientOut(agent.client_id), createdAt: row.created_at };
}

export async function removeFromGroup(
  ctx: AppContext,
  user: UserPrincipal,
  agentId: string,
  clientId: string | undefined,
  group: string,
): Promise<void> {
  const agent = await agentForUser(ctx.db, user, agentId, clientId);
  const res = await ctx.db
    .deleteFrom('agent_groups')
    .where('client_id', '=', agent.client_id)
    .where('group_name', '=', group)
    .where('agent_id', '=', agentId)
    .executeTakeFirst();
  if (Number(res.numDeletedRows) === 0)
    throw new DomainError('not_found.group_member', 'Agent is not a member of this group');
}
