import { TargetChangesQuery, TargetChangesResponse } from '@svc/protocol';
import { requireUser, userOf } from '../../../auth/guards.ts';
import { scopeOf } from '../../../auth/principal.ts';
import type { App, AppContext } from '../../../context.ts';
import { responses } from '../../../http/responses.ts';
import { targetChangesPage } from '../../../records/changes.ts';

/**
 * GET /api/targets/changes[?client_id=][&target=][&limit=][&cursor=]: per target the caller may see, what its
 * latest scan changed since the scan before it: how many findings of record it found new, kept,
 * reopened, resolved and did not check (docs/findings-of-record.md#what-changed). The lists are
 * the session's findings with `change=` (GET /api/sessions/{id}/findings). A `client_id` or
 * `target` with no target in the caller's scope answers 404, another client's exactly like a
 * missing one. Paged by client and target: `limit` (default 100, at most 1,000) and
 * `next_cursor`.
 */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/targets/changes',
    {
      onRequest: requireUser(ctx, { permission: 'sessions:read' }),
      schema: {
        operationId: 'listTargetChanges',
        tags: ['findings'],
        summary: 'Per target, what its latest scan changed since the previous one',
        security: [{ identityToken: [] }],
        querystring: TargetChangesQuery,
        response: responses({ 200: TargetChangesResponse }, 400, 401, 403, 404),
      },
    },
    async (request) => targetChangesPage(ctx.db, scopeOf(userOf(request)), request.query),
  );
}
