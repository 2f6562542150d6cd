import { AUDIT_DEFAULT_DAYS, AuditQuery, AuditResponse } from '@svc/protocol';
import { listAuditEvents, pruneAuditEvents } from '../../audit/queries.ts';
import { requireUser, userOf } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';

/**
 * GET /api/audit: newest first. Admins see every event, scoped users those of their
 * client ids. Events older than 90 days are pruned on each request.
 */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/audit',
    {
      onRequest: requireUser(ctx, { permission: 'audit' }),
      schema: {
        operationId: 'listAuditEvents',
        tags: ['audit'],
        summary: 'Audit log',
        security: [{ identityToken: [] }],
        querystring: AuditQuery,
        response: responses({ 200: AuditResponse }, 400, 401, 403),
      },
    },
    async (request) => {
      const user = userOf(request);
      const days = request.query.days ?? AUDIT_DEFAULT_DAYS;
      await pruneAuditEvents(ctx.db);
      const { events, total } = await listAuditEvents(ctx.db, {
        days,
        type: request.query.type,
        session: request.query.session,
        clientIds: user.clientIds,
        limit: request.query.limit ?? 1000,
      });
      return { events, days, total };
    },
  );
}
