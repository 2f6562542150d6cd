import { PostureResponse } from '@svc/protocol';
import { requireUser, userOf } from '../../../auth/guards.ts';
import type { App, AppContext } from '../../../context.ts';
import { responses } from '../../../http/responses.ts';
import { postureFor } from '../../../overview/posture.ts';

/**
 * GET /api/overview/posture: per client and per target of the caller's scope, open criticals
 * and highs, overdue and KEV findings of record, the newest scan, the target's risk trend and
 * the client's stale agents (null for users without health:agents).
 */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/overview/posture',
    {
      onRequest: requireUser(ctx, { permission: 'sessions:read' }),
      schema: {
        operationId: 'getOverviewPosture',
        tags: ['findings'],
        summary: 'Open criticals, highs, overdue and KEV findings, last scan and trend per client and target',
        security: [{ identityToken: [] }],
        response: responses({ 200: PostureResponse }, 401, 403),
      },
    },
    (request) => postureFor(ctx, userOf(request)),
  );
}
