import { RecordFilter, RecordsSummaryResponse } from '@svc/protocol';
import { requireUser, userOf } from '../../../auth/guards.ts';
import { scopeOf } from '../../../auth/principal.ts';
import type { App, AppContext } from '../../../context.ts';
import { responses } from '../../../http/responses.ts';
import { recordsSummary } from '../../../records/portfolio.ts';

/**
 * GET /api/findings/summary: the counts of the findings of record GET /api/findings would list
 * with the same filters: by severity and status, open, overdue, exceptions and false positives.
 */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/findings/summary',
    {
      onRequest: requireUser(ctx, { permission: 'sessions:read' }),
      schema: {
        operationId: 'summarizeFindingsOfRecord',
        tags: ['findings'],
        summary: 'Counts of the findings of record: open, overdue, by severity and status, exceptions, false positives',
        security: [{ identityToken: [] }],
        querystring: RecordFilter,
        response: responses({ 200: RecordsSummaryResponse }, 400, 401, 403),
      },
    },
    (request) => recordsSummary(ctx.db, scopeOf(userOf(request)), request.query, ctx.now().toISOString().slice(0, 10)),
  );
}
