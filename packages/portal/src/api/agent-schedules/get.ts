import { Type } from '@sinclair/typebox';
import { PortalScheduleListResponse, PortalScheduleQuery, PortalScheduleResponse } from '@svc/protocol';
import { getSchedule, listPortalSchedules } from '../../agents/portal-schedules.ts';
import { requireUser, userOf } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';

/** GET /api/agent-schedules: the portal's scan schedules (`?id=` one of them; `?client_id=` one client's). */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/agent-schedules',
    {
      onRequest: requireUser(ctx, { adminOnly: true }),
      schema: {
        operationId: 'listAgentSchedules',
        tags: ['agents'],
        summary: 'List scan schedules kept by the portal, or get one',
        description:
          'Without `id`: `{schedules: [...]}` ordered by client and name, narrowed to one client by `client_id`. With `id`: `{schedule}`, 404 when there is none. Admin only (docs/agent.md "Schedules kept by the portal").',
        security: [{ identityToken: [] }],
        querystring: PortalScheduleQuery,
        response: responses(
          { 200: Type.Union([PortalScheduleResponse, PortalScheduleListResponse]) },
          400,
          401,
          403,
          404,
        ),
      },
    },
    async (request) => {
      const { id, client_id } = request.query;
      const user = userOf(request);
      if (id !== undefined) return { schedule: await getSchedule(ctx, user, id) };
      return { schedules: await listPortalSchedules(ctx, user, client_id) };
    },
  );
}
