import { Type, type Static, type TSchema } from '@sinclair/typebox';

/** How the portal hands its schedules to agents (docs/agent.md "Schedules kept by the portal"). */

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const PORTAL_SCHEDULE_ID_PATTERN = '^psch_[0-9a-f]{12}$';
export const PortalScheduleId = Type.String({ pattern: PORTAL_SCHEDULE_ID_PATTERN, description: 'psch_<12 hex>' });

/** One schedule as an agent receives it (heartbeat answer `portal_schedules.items`). */
export const DeliveredSchedule = Type.Object({
  id: PortalScheduleId,
  name: Type.String(),
  targets: Type.String(),
  ports: Nullable(Type.String()),
  profile: Nullable(Type.String()),
  cron: Type.String(),
  timezone: Type.String(),
  upload: Type.Boolean(),
});
export type DeliveredSchedule = Static<typeof DeliveredSchedule>;

/** The heartbeat answer's `portal_schedules`: only when the agent's revision is not the portal's. */
export const PortalSchedulesAnswer = Type.Object({
  revision: Type.Integer({ minimum: 0, description: 'Send it back as portal_schedules_revision' }),
  items: Type.Array(DeliveredSchedule, {
    description: "The whole set: the agent's own and its groups' enabled schedules",
  }),
});
export type PortalSchedulesAnswer = Static<typeof PortalSchedulesAnswer>;
