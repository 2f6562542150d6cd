import { OkBody, PortalScheduleIdQuery } from '@svc/protocol';
import { removeSchedule } from '../../agents/portal-schedules.ts';
import { requireUser, userOf } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';

/** DELETE /api/agent-schedules?id=: remove a schedule; its agents drop it with their next heartbeat. */
export default function register(app: App, ctx: AppContext): void {
  app.delete(
    '/agent-schedules',
    {
      onRequest: requireUser(ctx, { adminOnly: true }),
      schema: {
        operationId: 'deleteAgentSchedule',
        tags: ['agents'],
        summary: 'Delete a scan schedule kept by the portal',
        description: 'Audited as schedule_deleted. A scan of it running on an agent finishes.',
        security: [{ identityToken: [] }],
        querystring: PortalScheduleIdQuery,
        response: responses({ 200: OkBody }, 400, 401, 403, 404),
      },
    },
    async (request) => {
      await removeSchedule(ctx, userOf(request), request.query.id);
      return { ok: true as const };
    },
  );
}
