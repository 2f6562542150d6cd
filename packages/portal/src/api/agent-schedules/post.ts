import { PortalScheduleCreateBody, PortalScheduleResponse } from '@svc/protocol';
import { createSchedule } from '../../agents/portal-schedules.ts';
import { requireUser, userOf } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';

/** POST /api/agent-schedules: a scan schedule for one agent or one group, delivered to its agents by heartbeat. */
export default function register(app: App, ctx: AppContext): void {
  app.post(
    '/agent-schedules',
    {
      onRequest: requireUser(ctx, { adminOnly: true }),
      schema: {
        operationId: 'createAgentSchedule',
        tags: ['agents'],
        summary: 'Create a scan schedule kept by the portal',
        description:
          "Exactly one of agent_id or group_name. The schedule belongs to the agent's client (an agent_id under several clients needs client_id, else 409) or to the group's (a group name used by several clients needs client_id, else 409; a group without members yet needs client_id). targets, ports and profile follow run_scan's payload rules, cron is 5 fields or 6 with seconds first, read in `timezone` (IANA, default UTC). upload and enabled default to true. Audited as schedule_created. At most 500 schedules per client (409).",
        security: [{ identityToken: [] }],
        body: PortalScheduleCreateBody,
        response: responses({ 201: PortalScheduleResponse }, 400, 401, 403, 404, 409),
      },
    },
    async (request, reply) =>
      reply.code(201).send({ schedule: await createSchedule(ctx, userOf(request), request.body) }),
  );
}
