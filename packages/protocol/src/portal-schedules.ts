import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { AgentClientId, AgentId, GroupName } from './agents.ts';
import { checkCommandPayload } from './command-payloads.ts';
import { ClientId, IsoDateTime } from './common.ts';
import { cronProblem, isTimeZone, normalizeCron } from './schedule-cron.ts';
import type { ScanBudget } from './scan-targets.ts';
import { PortalScheduleId } from './schedule-delivery.ts';

/**
 * Scan schedules kept by the portal (docs/agent.md "Schedules kept by the portal"): defined
 * for one agent or one group of a client, delivered to the agents they apply to in the
 * heartbeat answer, run by svcd like its config-file schedules. The rules of a schedule's
 * scan are run_scan's (targets within the scan budget, ports, profile), its cron is the
 * agents' cron rule read in its IANA time zone.
 */

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const DEFAULT_SCHEDULE_TIMEZONE = 'UTC';
/** Schedules per client at most: one client cannot crowd the table (or its agents' answers). */
export const MAX_PORTAL_SCHEDULES_PER_CLIENT = 500;

const ONE_LINE = '^(?=.*\\S)[^\\u0000-\\u001f\\u007f]*$';
const NO_CONTROL_BUT_NEWLINES = '^[^\\u0000-\\u0009\\u000b-\\u001f\\u007f]*$';

/** What the schedule runs and when: the fields a create names and an update may change. */
const scanFields = {
  name: Type.String({ minLength: 1, maxLength: 100, pattern: ONE_LINE }),
  description: Nullable(Type.String({ maxLength: 1000, pattern: NO_CONTROL_BUT_NEWLINES })),
  targets: Type.String({ minLength: 1, maxLength: 4096, description: "run_scan's targets rule" }),
  ports: Nullable(Type.String({ maxLength: 1024, description: "run_scan's ports rule; null: the profile's ports" })),
  profile: Nullable(Type.String({ maxLength: 64, description: "run_scan's profile rule; null: the agent's default" })),
  cron: Type.String({ minLength: 1, maxLength: 200, description: '5 fields, or 6 with seconds first' }),
  timezone: Type.String({
    maxLength: 64,
    description: `IANA time zone name the cron is read in (default ${DEFAULT_SCHEDULE_TIMEZONE})`,
  }),
  upload: Type.Boolean({ description: 'Upload each session to the portal (default true)' }),
  enabled: Type.Boolean({ description: 'Disabled schedules are kept but not delivered (default true)' }),
};

export const PortalScheduleCreateBody = Type.Object(
  {
    agent_id: Type.Optional(AgentId),
    group_name: Type.Optional(GroupName),
    client_id: AgentClientId,
    name: scanFields.name,
    description: Type.Optional(scanFields.description),
    targets: scanFields.targets,
    ports: Type.Optional(scanFields.ports),
    profile: Type.Optional(scanFields.profile),
    cron: scanFields.cron,
    timezone: Type.Optional(scanFields.timezone),
    upload: Type.Optional(scanFields.upload),
    enabled: Type.Optional(scanFields.enabled),
  },
  { additionalProperties: false },
);
export type PortalScheduleCreateBody = Static<typeof PortalScheduleCreateBody>;

/** PATCH: any of the scan fields; the target (agent or group) is fixed once created. */
export const PortalScheduleUpdateBody = Type.Partial(Type.Object(scanFields), {
  additionalProperties: false,
  minProperties: 1,
});
export type PortalScheduleUpdateBody = Static<typeof PortalScheduleUpdateBody>;

export const PortalScheduleQuery = Type.Object(
  { id: Type.Optional(PortalScheduleId), client_id: Type.Optional(ClientId) },
  { additionalProperties: false },
);
export const PortalScheduleIdQuery = Type.Object({ id: PortalScheduleId }, { additionalProperties: false });

export const PortalSchedule = Type.Object({
  id: PortalScheduleId,
  client_id: Nullable(Type.String()),
  agent_id: Nullable(Type.String()),
  group_name: Nullable(Type.String()),
  name: Type.String(),
  description: Nullable(Type.String()),
  targets: Type.String(),
  ports: Nullable(Type.String()),
  profile: Nullable(Type.String()),
  cron: Type.String(),
  timezone: Type.String(),
  upload: Type.Boolean(),
  enabled: Type.Boolean(),
  created_by: Type.String(),
  created_at: IsoDateTime,
  updated_at: IsoDateTime,
});
export type PortalSchedule = Static<typeof PortalSchedule>;
export const PortalScheduleResponse = Type.Object({ schedule: PortalSchedule });
export const PortalScheduleListResponse = Type.Object({ schedules: Type.Array(PortalSchedule) });

export interface ScheduleScanFields {
  targets: string;
  ports: string | null;
  profile: string | null;
  cron: string;
  timezone: string;
}

export type ScheduleCheck = { ok: true; value: ScheduleScanFields } | { ok: false; message: string };

/**
 * A schedule's scan and time, by run_scan's payload rules and the agents' cron rule (the
 * portal before storing, svcd before running). Messages name the field; accepted values come
 * back normalised (trimmed targets, single-spaced cron).
 */
export function checkScheduleFields(fields: ScheduleScanFields, budget?: ScanBudget): ScheduleCheck {
  const payload = {
    targets: fields.targets,
    ...(fields.ports === null ? {} : { ports: fields.ports }),
    ...(fields.profile === null ? {} : { profile: fields.profile }),
  };
  const scan = checkCommandPayload('run_scan', payload, { scanBudget: budget });
  if (!scan.ok) {
    const message = scan.message.replace(/^payload\./, '').replace(/^run_scan needs targets: /, 'targets: ');
    return { ok: false, message };
  }
  if (!isTimeZone(fields.timezone))
    return { ok: false, message: 'timezone must be an IANA time zone name (e.g. UTC, Europe/Berlin)' };
  const problem = cronProblem(fields.cron, fields.timezone);
  if (problem !== null) return { ok: false, message: `cron ${problem}` };
  return {
    ok: true,
    value: {
      targets: scan.payload.targets,
      ports: scan.payload.ports ?? null,
      profile: scan.payload.profile ?? null,
      cron: normalizeCron(fields.cron),
      timezone: fields.timezone,
    },
  };
}
