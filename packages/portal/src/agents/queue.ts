import type { Selectable } from 'kysely';
import {
  checkCommandPayload,
  COMMAND_EXPIRY_DEFAULT_SECONDS,
  COMMAND_TYPES,
  type AuditEvent,
  type CommandType,
  type QueueCommandBody,
  NO_CLIENT,
} from '@svc/protocol';
import { presentAuditEvent, recordAuditEvent } from '../audit/record.ts';
import type { AuditEventsTable } from '../db/schema.ts';
import { actorOf, type UserPrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { DomainError, insufficientPermissions } from '../domain/errors.ts';
import type { Queued } from './present.ts';
import { agentForCommand, insertCommand, insertGroupCommands, type NewCommand } from './queries.ts';
import { AGENT_DEREGISTERED, agentForUser, agentNotFound, clientOut } from './resolve.ts';

const DEFAULT_PRIORITY = 5;

/**
 * Queue a command for one agent or for every current member of a group (docs/api.md#agents-and-commands: one command
 * per member, created now by a single INSERT ... SELECT). An agent whose registering key
 * (or, that key gone, its client's best active key) lacks agent:commands cannot receive
 * commands (docs/api.md#agents-and-commands: eligibility.ts): a single one is a 403, group members are skipped and
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
  const checked = checkCommandPayload(type, body.payload ?? {}, {
    scanBudget: { maxAddresses: ctx.config.scanMaxAddresses },
  });
  if (!checked.ok) throw new DomainError('invalid.payload', checked.message);
  // Keys this portal does not know yet are stored and delivered as given (docs/agent/commands.md).
  const payload = { ...checked.unknown, ...checked.payload };
  const priority = body.priority ?? DEFAULT_PRIORITY;
  const createdBy = actorOf(admin);
  const now = ctx.now();
  // Bounds checked by the body's schema (a 400 naming expires_in_seconds).
  const expiresAt = new Date(now.getTime() + (body.expires_in_seconds ?? COMMAND_EXPIRY_DEFAULT_SECONDS) * 1000);
  const spec: NewCommand = { type, payload, priority, createdBy, now, expiresAt };

  const { queued, skipped, event } =
    body.agent_id !== undefined
      ? await queueForAgent(ctx, admin, body.agent_id, body.client_id, spec)
      : await queueForGroup(
          ctx,
          body.group_target as string,
          { clientId: body.client_id, allClients: body.all_clients === true },
          spec,
        );
  ctx.events.publish(event);
  return { type, queued, skipped };
}

interface QueueOutcome {
  queued: Queued[];
  skipped: { agent_id: string; reason: string }[];
  event: AuditEvent;
}

function dispatchedData(spec: NewCommand, groupTarget: string | null, queued: Queued[]): Record<string, unknown> {
  return {
    command_ids: queued.map((q) => Number(q.id)),
    agent_ids: queued.map((q) => q.agent_id),
    command_type: spec.type,
    group_target: groupTarget,
    priority: spec.priority,
    created_by: spec.createdBy,
    expires_at: spec.expiresAt.toISOString(),
  };
}

async function queueForAgent(
  ctx: AppContext,
  admin: UserPrincipal,
  agentId: string,
  clientId: string | null | undefined,
  spec: NewCommand,
): Promise<QueueOutcome> {
  const key = await agentForUser(ctx.db, admin, agentId, clientId);
  return ctx.db.transaction().execute(async (trx) => {
    const agent = await agentForCommand(trx, key.client_id, key.agent_id, spec.now);
    if (!agent) throw agentNotFound();
    if (agent.deregistered_at) throw new DomainError('conflict.agent_deregistered', AGENT_DEREGISTERED);
    if (!agent.eligible) throw insufficientPermissions('agent:commands');
    const queued = await insertCommand(trx, agent.client_id, agent.agent_id, spec);
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

const GROUP_CHANGED = 'A member of the group was removed while the command was queued; nothing was queued, try again';
const GROUP_AMBIGUOUS =
  'Group name is ambiguous: it exists under several clients; name one with client_id, or set all_clients to reach all of them';

/**
 * A group is (client_id, group_name): the same name under several clients is several
 * groups. A broadcast names the client (`client_id`), or the name must be used by one
 * client only, or the admin says `all_clients: true` explicitly; otherwise 409 listing
 * the clients, and nothing is queued. A group may hold 10,000 agents, so the whole
 * broadcast is one statement (queries.ts insertGroupCommands); its audit row carries the
 * client when all members belong to one (scoped readers then see it).
 */
async function queueForGroup(
  ctx: AppContext,
  group: string,
  scope: { clientId: string | null | undefined; allClients: boolean },
  spec: NewCommand,
): Promise<QueueOutcome> {
  const row = await insertGroupCommands(
    ctx.db,
    group,
    {
      clientId: scope.clientId === undefined ? undefined : (scope.clientId ?? NO_CLIENT),
      allClients: scope.allClients,
    },
    spec,
  ).catch((err: unknown) => {
    // A member left its client (purged, or a legacy agent moved) between the read and the insert of the one statement.
    if ((err as { code?: string }).code === '23503') throw new DomainError('conflict.group_changed', GROUP_CHANGED);
    throw err;
  });
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
    expires_at: spec.expiresAt,
  }));
  const skipped = (row.skipped ?? []).map((agent_id) => ({
    agent_id,
    reason: 'Insufficient permissions for agent:commands',
  }));
  return { queued, skipped, event };
}
