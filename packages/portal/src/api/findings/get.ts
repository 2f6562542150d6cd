import { RecordsQuery, RecordsResponse } from '@svc/protocol';
import { requireUser, userOf } from '../../auth/guards.ts';
import { scopeOf } from '../../auth/principal.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';
import { recordsPage } from '../../records/portfolio.ts';

/**
 * GET /api/findings: the findings of record across the caller's scope (docs/findings-of-record.md#the-portfolio),
 * in the order `sort` names (most severe first by default), paged by cursor. Admins see every client, scoped
 * users theirs; naming a client outside the scope is a 403.
 */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/findings',
    {
      onRequest: requireUser(ctx, { permission: 'sessions:read' }),
      schema: {
        operationId: 'listFindingsOfRecord',
        tags: ['findings'],
        summary: 'Findings of record across clients and targets, with their triage',
        description:
          'Filters: client_id (comma list), target, severity, status (open: every status but resolved), kev, epss_min, exception (accepted, expired, none), disposition (false_positive, none), first_seen_from/to, overdue, due_before, host (exact) or host_prefix. sort: severity (default), first_seen_desc, first_seen_asc, due_date_asc, epss_desc, host_asc. `next_cursor` continues the same filters and sort.',
        security: [{ identityToken: [] }],
        querystring: RecordsQuery,
        response: responses({ 200: RecordsResponse }, 400, 401, 403),
      },
    },
    (request) => recordsPage(ctx.db, scopeOf(userOf(request)), request.query, ctx.now().toISOString().slice(0, 10)),
  );
}
