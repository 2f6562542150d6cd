import { OverviewQuery, OverviewResponse } from '@svc/protocol';
import { requireUser, userOf } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';
import { overviewFor } from '../../overview/overview.ts';

/**
 * GET /api/overview[?days=]: the console's first page, scoped like the sessions listing
 * (admins: every client; scoped users: theirs). `fleet` is null for users without health:agents.
 */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/overview',
    {
      onRequest: requireUser(ctx, { permission: 'sessions:read' }),
      schema: {
        operationId: 'getOverview',
        tags: ['sessions'],
        summary: 'Risk over time, fleet health, expiring sessions and frequent open findings',
        security: [{ identityToken: [] }],
        querystring: OverviewQuery,
        response: responses({ 200: OverviewResponse }, 400, 401, 403),
      },
    },
    (request) => overviewFor(ctx, userOf(request), request.query.days),
  );
}
