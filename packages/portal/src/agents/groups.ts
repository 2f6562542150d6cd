import type { UserPrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { DomainError } from '../domain/errors.ts';
import { presentMember } from './present.ts';
import { deleteGroupMember, groupMembers, insertGroupMember, shareLockAgent } from './queries.ts';
import { AGENT_DEREGISTERED, agentForUser, agentNotFound, clientOut } from './resolve.ts';

type Member = ReturnType<typeof presentMember>;

/**
 * Group name → members; scoped users see their clients' agents only. A group is
 * (client_id, group_name): the same name under two clients lists both clients' members,
 * each with its client_id.
 */
export async function listGroups(ctx: AppContext, user: UserPrincipal): Promise<Record<string, Member[]>> {
  if (user.clientIds !== null && user.clientIds.length === 0) return {};
  const groups: Record<string, Member[]> = {};
  for (const r of await groupMembers(ctx.db, user.clientIds)) {
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
  const key = await agentForUser(ctx.db, user, agentId, clientId);
  const createdAt = await ctx.db.transaction().execute(async (trx) => {
    // Share-locked until the membership is in: a legacy agent cannot move to another client
    // (or be purged) in between; if it did first, it is no longer here.
    const agent = await shareLockAgent(trx, key.client_id, agentId);
    if (!agent) throw agentNotFound();
    if (agent.deregistered_at) throw new DomainError('conflict.agent_deregistered', AGENT_DEREGISTERED);
    return insertGroupMember(trx, key.client_id, group, agentId, ctx.now());
  });
  if (createdAt === undefined)
    throw new DomainError('conflict.group_member', 'Agent is already a member of this group');
  return { clientId: clientOut(key.client_id), createdAt };
}

export async function removeFromGroup(
  ctx: AppContext,
  user: UserPrincipal,
  agentId: string,
  clientId: string | undefined,
  group: string,
): Promise<void> {
  const agent = await agentForUser(ctx.db, user, agentId, clientId);
  if (!(await deleteGroupMember(ctx.db, agent.client_id, group, agentId)))
    throw new DomainError('not_found.group_member', 'Agent is not a member of this group');
}
