import { sql, type Selectable } from 'kysely';
import {
  checkCommandPayload,
  COMMAND_TYPES,
  type AuditEvent,
  type CommandType,
  type QueueCommandBody,
} from '@svc/protocol';
import { presentAuditEvent, recordAuditEvent } from '../audit/record.ts';
import type { AuditEventsTable } from '../db/schema.ts';
import { actorOf, type UserPrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { DomainError, insufficientPermissions } from '../domain/errors.ts';
import { commandEligible } from './eligibility.ts';
import type { Queued } from './present.ts';
import { AGENT_DEREGISTERED, AGENT_NOT_FOUND, agentForUser, clientOut, NO_CLIENT } from './resolve.ts';

export const DEFAULT_PRIORITY = 5;

/**
 * Queue a command for one agent or for every current member of a group (D14: one command
 * per member, created now by a single INSERT ... SELECT). An agent whose registering key
 * (or, that key gone, its client's best active key) lacks agent:commands cannot receive
 * commands (D2, eligibility.ts): a single one is a 403, group members are skipped and
 * listed. `command_dispatched` is audited (actor: the admin).
 */
export async function queueCommands(
  ctx: AppContext,
  admin: UserPrincipal,
  body: QueueCommandBody,
): Promise<{ type: CommandType; queued: Queued[]; skipped: { agent_id: string; reason: string }[] }> {
  if (!(COMMAND_TYPES as readonly string[]).includes(body.command_type))
    throw new DomainError('invalid.command_type', `command_type must be one of ${COMMAND_TYPES.join(', ')}`);
  const type = body.command_type as CommandType;
  if ((body.agent_id === undefined) === (body.group_target === undefined))
    throw new DomainError('invalid.command_target', 'Exactly one of agent_id or group_target is required');
  if (body.all_clients !== undefined && body.group_target === undefined)
    throw new DomainError('invalid.command_target', 'all_clients applies to group_target only');
  if (body.all_clients === true && body.client_id !== undefined)
    throw new DomainError('invalid.command_target', 'Name either client_id or all_clients, not both');
  const checked = checkCommandPayload(type, body.payload ?? {});
  if (!checked.ok) throw new DomainError('invalid.payload', checked.message);
  const payload = checked.payload;
  const priority = body.priority ?? DEFAULT_PRIORITY;
  const createdBy = actorOf(admin);
  const now = ctx.now();

  const { queued, skipped, event } =
    body.agent_id !== undefined
      ? await queueForAgent(ctx, admin, body.agent_id, body.client_id, { type, payload, priority, createdBy, now })
      : await queueForGroup(
          ctx,
          body.group_target as string,
          { clientId: body.client_id, allClients: body.all_clients === true },
          { type, payload, priority, createdBy, now },
        );
  ctx.events.publish(event);
  return { type, queued, skipped };
}

interface CommandSpec {
  type: CommandType;
  payload: Record<string, unknown>;
  priority: number;
  createdBy: string;
  now: Date;
}

interface QueueOutcome {
  queued: Queued[];
  skipped: { agent_id: string; reason: string }[];
  event: AuditEvent;
}

function dispatchedData(spec: CommandSpec, groupTarget: string | null, queued: Queued[]): Record<string, unknown> {
  return {
    command_ids: queued.map((q) => Number(q.id)),
    agent_ids: queued.map((q) => q.agent_id),
    command_type: spec.type,
    group_target: groupTarget,
    priority: spec.priority,
    created_by: spec.createdBy,
  };
}

async function queueForAgent(
  ctx: AppContext,
  admin: UserPrincipal,
  agentId: string,
  clientId: string | null | undefined,
  spec: CommandSpec,
): Promise<QueueOutcome> {
  const key = await agentForUser(ctx.db, admin, agentId, clientId);
  return ctx.db.transaction().execute(async (trx) => {
    const agent = await trx
      .selectFrom('agents as a')
      .select(['a.agent_id', 'a.client_id', 'a.deregistered_at'])
      .select(commandEligible(sql.ref('a.client_id'), sql.ref('a.license_id'), spec.now).as('eligible'))
      .where('a.client_id', '=', key.client_id)
      .where('a.agent_id', '=', key.agent_id)
      .executeTakeFirst();
    if (!agent) throw new DomainError('not_found.agent', AGENT_NOT_FOUND);
    if (agent.deregistered_at) throw new DomainError('conflict.agent_deregistered', AGENT_DEREGISTERED);
    if (!agent.eligible) throw insufficientPermissions('agent:commands');
    const queued = await trx
      .insertInto('agent_commands')
      .values({
        client_id: agent.client_id,
        agent_id: agent.agent_id,
        command_type: spec.type,
        payload: JSON.stringify(spec.payload),
        priority: spec.priority,
        created_by: spec.createdBy,
        group_target: null,
        created_at: spec.now,
        sent_at: null,
        acked_at: null,
        completed_at: null,
      })
      .returning(['id', 'agent_id', 'created_at'])
      .execute();
    // Scoped readers of the audit log see a dispatch when it concerns one client only.
    const event = await recordAuditEvent(trx, {
      event_type: 'command_dispatched',
      actor: spec.createdBy,
      client_id: clientOut(agent.client_id),
      data: dispatchedData(spec, null, queued),
    });
    return { queued, skipped: [], event };
  });
}

interface GroupDispatchRow extends Partial<Selectable<AuditEventsTable>> {
  members: number;
  client_ids: string[] | null;
  skipped: string[] | null;
}

export const GROUP_AMBIGUOUS =
  'Group name is ambiguous: it exists under several clients; name one with client_id, or set all_clients to reach all of them';

/**
 * A group is (client_id, group_name): the same name under several clients is several
 * groups. A broadcast names the client (`client_id`), or the name must be used by one
 * client only, or the admin says `all_clients: true` explicitly; otherwise 409 listing
 * the clients, and nothing is queued.
 *
 * A group may hold 10,000 agents, so the whole broadcast is one statement (atomic on its
 * own, no transaction round trips): the members are read once, eligibility is computed
 * once per (client, registering key) rather than per member, the commands inserted for
 * those whose registering key allows agent:commands, and the `command_dispatched` audit
 * row built from the INSERT's RETURNING inside PostgreSQL. Only the audit row comes back;
 * its command_ids/agent_ids (ordered by id, i.e. by agent_id) are the answer's commands,
 * so 10,000 ids are neither sent back twice nor serialised by Node. The audit row carries
 * the client when all members belong to one (scoped readers then see it). Nothing is
 * written when the group is empty, spans clients unasked, or no member may receive commands.
 */
async function queueForGroup(
  ctx: AppContext,
  group: string,
  scope: { clientId: string | null | undefined; allClients: boolean },
  spec: CommandSpec,
): Promise<QueueOutcome> {
  const clientFilter =
    scope.clientId === undefined ? sql<boolean>`true` : sql<boolean>`g.client_id = ${scope.clientId ?? NO_CLIENT}`;
  const { rows } = await sql<GroupDispatchRow>`
    WITH raw AS MATERIALIZED (
      SELECT g.client_id, g.agent_id, a.license_id
      FROM agent_groups g JOIN agents a ON a.client_id = g.client_id AND a.agent_id = g.agent_id
      WHERE g.group_name = ${group} AND ${clientFilter} AND a.deregistered_at IS NULL
    ), keys AS MATERIALIZED (
      SELECT k.client_id, k.license_id, ${commandEligible(sql`k.client_id`, sql`k.license_id`, spec.now)} AS eligible
      FROM (SELECT DISTINCT client_id, license_id FROM raw) k
    ), members AS MATERIALIZED (
      SELECT r.client_id, r.agent_id, k.eligible
      FROM raw r JOIN keys k ON k.client_id = r.client_id AND COALESCE(k.license_id, '') = COALESCE(r.license_id, '')
    ), spread AS (
      SELECT array_agg(DISTINCT client_id ORDER BY client_id) AS client_ids FROM members
    ), ins AS (
      INSERT INTO agent_commands (client_id, agent_id, command_type, payload, priority, created_by, group_target, created_at)
      SELECT client_id, agent_id, ${spec.type}, ${JSON.stringify(spec.payload)}::jsonb, ${spec.priority}, ${spec.createdBy}, ${group}, ${spec.now}
      FROM members WHERE eligible AND (${scope.allClients}::boolean OR (SELECT cardinality(client_ids) FROM spread) <= 1)
      ORDER BY agent_id, client_id
      RETURNING id, client_id, agent_id
    ), summary AS (
      SELECT count(*)::int AS members,
             min(client_id) AS client_id,
             array_agg(agent_id ORDER BY agent_id) FILTER (WHERE NOT eligible) AS skipped
      FROM members
    ), cmds AS (
      SELECT count(*) AS n, jsonb_agg(id ORDER BY id) AS ids, jsonb_agg(agent_id ORDER BY id) AS agent_ids FROM ins
    ), ev AS (
      INSERT INTO audit_events (event_type, actor, client_id, data)
      SELECT 'command_dispatched', ${spec.createdBy}, CASE WHEN cardinality(sp.client_ids) = 1 THEN NULLIF(s.client_id, '') END,
             jsonb_build_object('command_ids', c.ids, 'agent_ids', c.agent_ids, 'command_type', ${spec.type}::text,
                                'group_target', ${group}::text, 'priority', ${spec.priority}::int, 'created_by', ${spec.createdBy}::text)
      FROM summary s, spread sp, cmds c WHERE c.n > 0
      RETURNING *
    )
    SELECT s.members, sp.client_ids, s.skipped, ev.* FROM summary s CROSS JOIN spread sp LEFT JOIN ev ON true
  `.execute(ctx.db);
  const row = rows[0];
  if (!row || row.members === 0) throw new DomainError('not_found.group', 'Group not found or has no members');
  const clientIds = row.client_ids ?? [];
  if (!scope.allClients && clientIds.length > 1)
    throw new DomainError('conflict.group_ambiguous', GROUP_AMBIGUOUS, {
      extra: { client_ids: clientIds.map(clientOut) },
    });
  if (row.id === null || row.id === undefined) throw insufficientPermissions('agent:commands');
  const event = presentAuditEvent(row as Selectable<AuditEventsTable>);
  const data = event.data as { command_ids: number[]; agent_ids: string[] };
  const queued = data.command_ids.map((id, i) => ({
    id: String(id),
    agent_id: data.agent_ids[i] as string,
    created_at: spec.now,
  }));
  const skipped = (row.skipped ?? []).map((agent_id) => ({
    agent_id,
    reason: 'Insufficient permissions for agent:commands',
  }));
  return { queued, skipped, event };
}
