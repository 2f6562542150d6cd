import { AUDIT_DEFAULT_DAYS, AuditQuery, AuditResponse } from '@svc/protocol';
import { readAuditLog } from '../../audit/read.ts';
import { requireUser, userOf } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';

/** GET /api/audit: newest first; admins see every event, scoped users those of their client ids. */
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
      const { events, total } = await readAuditLog(ctx.db, {
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
