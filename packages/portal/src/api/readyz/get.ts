import { ReadyResponse } from '@svc/protocol';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';
import { databaseReady } from '../../operations/readiness.ts';

/**
 * GET /readyz: readiness for load balancers and service managers. 200 while the database
 * answers, 503 while it cannot be reached (an outage, the embedded server restarting).
 * GET /api/health stays the liveness answer and never touches the database. Registered
 * outside /api, where probes conventionally look, and public like /api/health.
 */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'checkReadiness',
        security: [],
        tags: ['health'],
        summary: 'Readiness: 200 while the database answers, 503 while it cannot be reached',
        description:
          'For load balancers and service managers. Runs one `SELECT 1` (at most 2 s); `/api/health` is liveness and never touches the database.',
        response: responses({ 200: ReadyResponse }, 400, 503),
      },
    },
    async (_request, reply) => {
      if (await databaseReady(ctx.pool)) return { status: 'ready' as const };
      return reply.code(503).header('retry-after', '5').send({ error: 'Database unavailable, try again shortly' });
    },
  );
}
