import { randomBytes } from 'node:crypto';
import {
  checkScheduleFields,
  DEFAULT_SCHEDULE_TIMEZONE,
  MAX_PORTAL_SCHEDULES_PER_CLIENT,
  type DeliveredSchedule,
  type PortalSchedule,
  type PortalScheduleCreateBody,
  type PortalSchedulesAnswer,
  type PortalScheduleUpdateBody,
  type ScheduleScanFields,
  NO_CLIENT,
} from '@svc/protocol';
import { recordAuditEvent } from '../audit/record.ts';
import { actorOf, type UserPrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { DomainError } from '../domain/errors.ts';
import { agentForUser, clientOut } from './resolve.ts';
import {
  clientsWithGroup,
  countSchedules,
  deleteSchedule,
  insertSchedule,
  listSchedules,
  type ScheduleRow,
  scheduleById,
  schedulesOfAgent,
  updateSchedule,
} from './schedule-queries.ts';

/**
 * Scan schedules kept by the portal (docs/agent.md "Schedules kept by the portal"): admin
 * CRUD scoped like agents and groups, audited (schedule_created / _updated / _deleted, in
 * the audit log only, not sent to webhooks), and the set each agent is handed in its
 * heartbeat answer.
 */

const notFound = () => new DomainError('not_found.schedule', 'Schedule not found');
const GROUP_NOT_FOUND =
  'Group not found: name its client with client_id to schedule for a group that has no members yet';
const GROUP_AMBIGUOUS = 'Group name is ambiguous: it exists under several clients; name one with client_id';

export function presentSchedule(r: ScheduleRow): PortalSchedule {
  return {
    id: r.id,
    client_id: clientOut(r.client_id),
    agent_id: r.agent_id,
    group_name: r.group_name,
    name: r.name,
    description: r.description,
    targets: r.targets,
    ports: r.ports,
    profile: r.profile,
    cron: r.cron,
    timezone: r.timezone,
    upload: r.upload,
    enabled: r.enabled,
    created_by: r.created_by,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

function checked(ctx: AppContext, fields: ScheduleScanFields): ScheduleScanFields {
  const c = checkScheduleFields(fields, { maxAddresses: ctx.config.scanMaxAddresses });
  if (!c.ok) throw new DomainError('invalid.schedule', c.message);
  return c.value;
}

/** The client of a group target: the one named, else the only client with that group. */
async function groupClient(
  ctx: AppContext,
  user: UserPrincipal,
  group: string,
  clientId: string | null | undefined,
): Promise<string> {
  if (clientId !== undefined) {
    const id = clientId ?? NO_CLIENT;
    if (user.clientIds !== null && !user.clientIds.includes(id))
      throw new DomainError('not_found.group', GROUP_NOT_FOUND);
    return id;
  }
  const clients = await clientsWithGroup(ctx.db, group, user.clientIds);
  if (clients.length === 0) throw new DomainError('not_found.group', GROUP_NOT_FOUND);
  if (clients.length > 1)
    throw new DomainError('conflict.group_ambiguous', GROUP_AMBIGUOUS, {
      extra: { client_ids: clients.map(clientOut) },
    });
  return clients[0] as string;
}

function auditData(r: ScheduleRow, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schedule_id: r.id,
    name: r.name,
    agent_id: r.agent_id,
    group_name: r.group_name,
    targets: r.targets,
    cron: r.cron,
    timezone: r.timezone,
    enabled: r.enabled,
    ...extra,
  };
}

export async function createSchedule(
  ctx: AppContext,
  user: UserPrincipal,
  body: PortalScheduleCreateBody,
): Promise<PortalSchedule> {
  if ((body.agent_id === undefined) === (body.group_name === undefined))
    throw new DomainError('invalid.schedule_target', 'Exactly one of agent_id or group_name is required');
  const fields = checked(ctx, {
    targets: body.targets,
    ports: body.ports ?? null,
    profile: body.profile ?? null,
    cron: body.cron,
    timezone: body.timezone ?? DEFAULT_SCHEDULE_TIMEZONE,
  });
  const clientId =
    body.agent_id !== undefined
      ? (await agentForUser(ctx.db, user, body.agent_id, body.client_id)).client_id
      : await groupClient(ctx, user, body.group_name as string, body.client_id);
  if ((await countSchedules(ctx.db, clientId)) >= MAX_PORTAL_SCHEDULES_PER_CLIENT)
    throw new DomainError(
      'conflict.schedule_limit',
      `Schedule limit reached (${MAX_PORTAL_SCHEDULES_PER_CLIENT} per client)`,
    );
  const now = ctx.now();
  const actor = actorOf(user);
  return ctx.db.transaction().execute(async (trx) => {
    const row = await insertSchedule(trx, {
      id: `psch_${randomBytes(6).toString('hex')}`,
      client_id: clientId,
      agent_id: body.agent_id ?? null,
      group_name: body.group_name ?? null,
      name: body.name.trim(),
      description: body.description ?? null,
      ...fields,
      upload: body.upload ?? true,
      enabled: body.enabled ?? true,
      created_by: actor,
      created_at: now,
      updated_at: now,
    });
    await recordAuditEvent(trx, {
      event_type: 'schedule_created',
      actor,
      client_id: clientOut(clientId),
      data: auditData(row),
    });
    return presentSchedule(row);
  });
}

export async function listPortalSchedules(
  ctx: AppContext,
  user: UserPrincipal,
  clientId: string | undefined,
): Promise<PortalSchedule[]> {
  return (await listSchedules(ctx.db, user.clientIds, clientId)).map(presentSchedule);
}

export async function getSchedule(ctx: AppContext, user: UserPrincipal, id: string): Promise<PortalSchedule> {
  const row = await scheduleById(ctx.db, id, user.clientIds);
  if (!row) throw notFound();
  return presentSchedule(row);
}

export async function changeSchedule(
  ctx: AppContext,
  user: UserPrincipal,
  id: string,
  patch: PortalScheduleUpdateBody,
): Promise<PortalSchedule> {
  const actor = actorOf(user);
  return ctx.db.transaction().execute(async (trx) => {
    const old = await scheduleById(trx, id, user.clientIds);
    if (!old) throw notFound();
    const fields = checked(ctx, {
      targets: patch.targets ?? old.targets,
      ports: patch.ports === undefined ? old.ports : patch.ports,
      profile: patch.profile === undefined ? old.profile : patch.profile,
      cron: patch.cron ?? old.cron,
      timezone: patch.timezone ?? old.timezone,
    });
    const row = await updateSchedule(trx, id, {
      ...fields,
      ...(patch.name === undefined ? {} : { name: patch.name.trim() }),
      ...(patch.description === undefined ? {} : { description: patch.description }),
      ...(patch.upload === undefined ? {} : { upload: patch.upload }),
      ...(patch.enabled === undefined ? {} : { enabled: patch.enabled }),
      updated_at: ctx.now(),
    });
    if (!row) throw notFound();
    await recordAuditEvent(trx, {
      event_type: 'schedule_updated',
      actor,
      client_id: clientOut(row.client_id),
      data: auditData(row, { changed: Object.keys(patch).sort() }),
    });
    return presentSchedule(row);
  });
}

export async function removeSchedule(ctx: AppContext, user: UserPrincipal, id: string): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const old = await scheduleById(trx, id, user.clientIds);
    if (!old || !(await deleteSchedule(trx, id))) throw notFound();
    await recordAuditEvent(trx, {
      event_type: 'schedule_deleted',
      actor: actorOf(user),
      client_id: clientOut(old.client_id),
      data: auditData(old),
    });
  });
}

const delivered = (r: ScheduleRow): DeliveredSchedule => ({
  id: r.id,
  name: r.name,
  targets: r.targets,
  ports: r.ports,
  profile: r.profile,
  cron: r.cron,
  timezone: r.timezone,
  upload: r.upload,
});

/**
 * The heartbeat answer's `portal_schedules`: only for an agent that reports the revision it
 * holds (older daemons do not know the field) and only when the client's revision is another.
 */
export async function portalSchedulesAnswer(
  ctx: AppContext,
  agentId: string,
  held: number | null,
  current: { clientId: string; revision: number } | null,
): Promise<PortalSchedulesAnswer | undefined> {
  if (held === null || current === null || held === current.revision) return undefined;
  const { revision, items } = await schedulesOfAgent(ctx.db, current.clientId, agentId);
  return { revision, items: items.map(delivered) };
}
