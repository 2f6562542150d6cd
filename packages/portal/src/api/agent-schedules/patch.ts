import { PortalScheduleIdQuery, PortalScheduleResponse, PortalScheduleUpdateBody } from '@svc/protocol';
import { changeSchedule } from '../../agents/portal-schedules.ts';
import { requireUser, userOf } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';

/** PATCH /api/agent-schedules?id=: change a schedule (enable or disable it too). */
export default function register(app: App, ctx: AppContext): void {
  app.patch(
    '/agent-schedules',
    {
      onRequest: requireUser(ctx, { adminOnly: true }),
      schema: {
        operationId: 'updateAgentSchedule',
        tags: ['agents'],
        summary: 'Change a scan schedule kept by the portal',
        description:
          'Any of name, description, targets, ports, profile, cron, timezone, upload, enabled (null clears description, ports and profile). The target (agent or group) is fixed: delete and create to move a schedule. The whole schedule is checked again; its agents get the new version with their next heartbeat. Audited as schedule_updated.',
        security: [{ identityToken: [] }],
        querystring: PortalScheduleIdQuery,
        body: PortalScheduleUpdateBody,
        response: responses({ 200: PortalScheduleResponse }, 400, 401, 403, 404),
      },
    },
    async (request) => ({
      schedule: await changeSchedule(ctx, userOf(request), request.query.id, request.body),
    }),
  );
}
