import { Type } from '@sinclair/typebox';
import { AmbiguousSessionBody, SessionDetailResponse, SessionListResponse, SessionsQuery } from '@svc/protocol';
import { requireUser, userOf } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';
import { parseSessionId } from '../../sessions/access.ts';
import { listSessionsFor, sessionDetail } from '../../sessions/listing.ts';
import { presentSessionDetail } from '../../sessions/present.ts';

/**
 * GET /api/sessions (docs/api.md#sessions), identity JWT only. Without `session`: the listing, newest
 * first, filtered by `client_id`, `status`, `target` (exact), `q` (part of target or client,
 * any case), `uploaded_from`/`uploaded_to`, ordered by `sort` + `order`, paged by `limit` +
 * `cursor` (answer's `next_cursor`), with `total` over every page. With `session=<id>`: that session with its status history and
 * notes; `client_id` then names the session's client when the id exists under several
 * (409 otherwise, docs/api.md#ids-are-per-client), not a listing filter.
 */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/sessions',
    {
      onRequest: requireUser(ctx, { permission: 'sessions:read' }),
      schema: {
        operationId: 'listSessions',
        tags: ['sessions'],
        summary: 'List sessions, or one session with ?session=',
        security: [{ identityToken: [] }],
        querystring: SessionsQuery,
        response: responses(
          { 200: Type.Union([SessionListResponse, SessionDetailResponse]), 409: AmbiguousSessionBody },
          400,
          401,
          403,
          404,
        ),
      },
    },
    async (request) => {
      const user = userOf(request);
      const q = request.query;
      if (q.session !== undefined) {
        const sessionId = parseSessionId(q.session);
        return presentSessionDetail(await sessionDetail(ctx, user, sessionId, q.client_id), ctx.config.baseUrl);
      }
      return listSessionsFor(ctx, user, {
        clientId: q.client_id,
        status: q.status,
        target: q.target,
        search: q.q,
        sort: q.sort,
        order: q.order,
        uploadedFrom: q.uploaded_from,
        uploadedTo: q.uploaded_to,
        limit: q.limit,
        cursor: q.cursor,
      });
    },
  );
}
