import { RecordsCountQuery, RecordsCountResponse } from '@svc/protocol';
import { requireUser, userOf } from '../../../auth/guards.ts';
import { scopeOf } from '../../../auth/principal.ts';
import type { App, AppContext } from '../../../context.ts';
import { responses } from '../../../http/responses.ts';
import { recordsCount } from '../../../records/portfolio.ts';

/**
 * GET /api/findings/count: how many findings of record GET /api/findings would list with the
 * same filters, counted up to `upto` (10,000: the bulk limit) so it stays fast at any size.
 */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/findings/count',
    {
      onRequest: requireUser(ctx, { permission: 'sessions:read' }),
      schema: {
        operationId: 'countFindingsOfRecord',
        tags: ['findings'],
        summary: 'How many findings of record match the filters, up to 10,000',
        description:
          'The filters of GET /api/findings. Reads at most `upto` + 1 matching records: `capped: true` says more than `count` match. For the breakdown by severity and status, GET /api/findings/summary (which reads every match).',
        security: [{ identityToken: [] }],
        querystring: RecordsCountQuery,
        response: responses({ 200: RecordsCountResponse }, 400, 401, 403),
      },
    },
    (request) => recordsCount(ctx.db, scopeOf(userOf(request)), request.query, ctx.now().toISOString().slice(0, 10)),
  );
}
