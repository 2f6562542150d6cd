import { DbHealthResponse } from '@svc/protocol';
import { requireUser, userOf } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';
import { databaseHealth } from '../../operations/db-health.ts';

/** GET /api/db-health (db:health): table counts, database facts, recent activity, session statistics, storage. */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/db-health',
    {
      onRequest: requireUser(ctx, { permission: 'db:health' }),
      schema: {
        operationId: 'getDatabaseHealth',
        tags: ['health'],
        summary: 'Database health',
        security: [{ identityToken: [] }],
        response: responses({ 200: DbHealthResponse }, 401, 403),
      },
    },
    async (request) => databaseHealth(ctx, userOf(request)),
  );
}
