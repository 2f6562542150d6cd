import { sql } from 'kysely';
import { COMMAND_TYPES, TIERS, tierAllows, type CommandType, type QueueCommandBody } from '@svc/protocol';
import { recordAuditEvent } from '../audit/record.ts';
import { actorOf, type UserPrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { badRequest, conflict, insufficientPermissions, notFound } from '../errors.ts';
import { validatePayload } from './payload.ts';

export interface Queued {
  id: string;
  agent_id: string;
  created_at: Date;
}

export const DEFAULT_PRIORITY = 5;
/** The tiers whose agents may receive commands, from the permission matrix (D2). */
const COMMAND_TIERS: string[] = TIERS.filter((t) => tierAllows(t, 'agent:commands'));

/**
 * Queue a command for one agent or for every current member of a group (D14: one command
 * per member, created now by a single INSERT ... SELECT). Agents registered under a key
 * without agent:commands cannot receive commands (D2): a single one is a 403, group
 * members are skipped and listed. `command_dispatched` is audited (actor: the admin).
 */
export async function queueCommands(ctx: AppContext, admin: UserPrincipal, body: QueueCommandBody): Promise<{ type: CommandType; queued: Queued[]; skipped: { agent_id: string; reason: string }[] }> {
  if (!(COMMAND_TYPES as readonly string[]).includes(body.command_type)) throw badRequest(`command_type must be one of ${COMMAND_TYPES.join(', ')}`);
  const type = body.command_type as CommandType;
  if ((body.agent_id === undefined) === (body.group_target === undefined)) throw badRequest('Exactly one of agent_id or group_target is required');
  const payload = validatePayload(type, body.payload ?? {});
  const priority = body.priority ?? DEFAULT_PRIORITY;
  const createdBy = actorOf(admin);
  const now = ctx.now();

  const { queued, skipped, event } = await ctx.db.transaction().execute(async (trx) => {
    let queued: Queued[];
    // Scoped readers of the audit log see a dispatch when it concerns one client only.
    let eventClientId: string | null;
    let skipped: { agent_id: string; reason: string }[] = [];
    if (body.agent_id !== undefined) {
      const agent = await trx.selectFrom('agents').select(['agent_id', 'key_tier', 'deregistered_at', 'client_id']).where('agent_id', '=', body.agent_id).executeTakeFirst();
      if (!agent) throw notFound('Agent not found');
      if (agent.deregistered_at) throw conflict('Agent is deregistered');
      if (!tierAllows(agent.key_tier, 'agent:commands')) throw insufficientPermissions('agent:commands');
      eventClientId = agent.client_id;
      queued = await trx
        .insertInto('agent_commands')
        .values({ agent_id: agent.agent_id, command_type: type, payload: JSON.stringify(payload), priority, created_by: createdBy, group_target: null, created_at: now, sent_at: null, acked_at: null, completed_at: null })
        .returning(['id', 'agent_id', 'created_at'])
        .execute();
    } else {
      const group = body.group_target as string;
      // One aggregate instead of reading every member (a group may hold 10,000 agents):
      // how many, which clients, and only the members that cannot receive commands.
      const { rows } = await sql<{ members: number; clients: number; client_id: string | null; skipped: string[] | null }>`
        SELECT count(*)::int AS members,
               (count(DISTINCT a.client_id) + max(CASE WHEN a.client_id IS NULL THEN 1 ELSE 0 END))::int AS clients,
               min(a.client_id) AS client_id,
               array_agg(a.agent_id ORDER BY a.agent_id) FILTER (WHERE NOT a.key_tier = ANY(${COMMAND_TIERS})) AS skipped
        FROM agent_groups g JOIN agents a ON a.agent_id = g.agent_id
        WHERE g.group_name = ${group} AND a.deregistered_at IS NULL
      `.execute(trx);
      const summary = rows[0];
      if (!summary || summary.members === 0) throw notFound('Group not found or has no members');
      skipped = (summary.skipped ?? []).map((agent_id) => ({ agent_id, reason: 'Insufficient permissions for agent:commands' }));
      if (skipped.length === summary.members) throw insufficientPermissions('agent:commands');
      eventClientId = summary.clients === 1 ? summary.client_id : null;
      const result = await sql<Omit<Queued, 'created_at'>>`
        INSERT INTO agent_commands (agent_id, command_type, payload, priority, created_by, group_target, created_at)
        SELECT g.agent_id, ${type}, ${JSON.stringify(payload)}::jsonb, ${priority}, ${createdBy}, ${group}, ${now}
        FROM agent_groups g JOIN agents a ON a.agent_id = g.agent_id
        WHERE g.group_name = ${group} AND a.deregistered_at IS NULL AND a.key_tier = ANY(${COMMAND_TIERS})
        ORDER BY g.agent_id
        RETURNING id, agent_id
      `.execute(trx);
      queued = result.rows.map((r) => ({ ...r, created_at: now }));
    }
    const event = await recordAuditEvent(trx, {
      event_type: 'command_dispatched',
      actor: createdBy,
      client_id: eventClientId,
      data: {
        command_ids: queued.map((q) => Number(q.id)),
        agent_ids: queued.map((q) => q.agent_id),
        command_type: type,
        group_target: body.group_target ?? null,
        priority,
        created_by: createdBy,
      },
    });
    return { queued, skipped, event };
  });
  ctx.events.publish(event);
  return { type, queued, skipped };
}
