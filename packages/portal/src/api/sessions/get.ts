import { AmbiguousSessionBody, SessionDetailResponse, SessionListResponse, SessionsQuery } from '@svc/protocol';
import { requireUser, userOf } from '../../auth/guards.ts';
import { inScope } from '../../auth/principal.ts';
import type { App, AppContext } from '../../context.ts';
import { forbidden } from '../../http/errors.ts';
import { responses } from '../../http/responses.ts';
import { accessSession, parseSessionId } from '../../sessions/access.ts';
import { listSessions } from '../../sessions/listing.ts';
import { presentSession } from '../../sessions/present.ts';
import { notifyExpiringSessions } from '../../sessions/retention.ts';
import { Type } from '@sinclair/typebox';

/**
 * GET /api/sessions (D5), identity JWT only. Without `session`: the listing, newest
 * first, filtered by `client_id`, `status`, `target`, paged by `limit` + `cursor`
 * (answer's `next_cursor`). Listing is also where `report_expiring` fires (D6).
 * With `session=<id>`: that session with its status history and notes; `client_id` then
 * names the session's client when the id exists under several (409 otherwise, D17).
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
        // With `session`, client_id names the session's client (D17), not a listing filter.
        const { session } = await accessSession(ctx, request, sessionId, {
          permission: 'sessions:read',
          jwtOnly: true,
          clientId: q.client_id,
        });
        const clientId = session.client_id;
        const [token, history, notes] = await Promise.all([
          ctx.db
            .selectFrom('share_tokens')
            .select('token')
            .where('client_id', '=', clientId)
            .where('session_id', '=', sessionId)
            .executeTakeFirst(),
          ctx.db
            .selectFrom('status_history')
            .selectAll()
            .where('client_id', '=', clientId)
            .where('session_id', '=', sessionId)
            .orderBy('changed_at')
            .orderBy('id')
            .execute(),
          ctx.db
            .selectFrom('session_notes')
            .selectAll()
            .where('client_id', '=', clientId)
            .where('session_id', '=', sessionId)
            .orderBy('created_at')
            .orderBy('id')
            .execute(),
        ]);
        return {
          session: presentSession(session, token?.token ?? null, ctx.config.baseUrl),
          status_history: history.map((h) => ({
            from_status: h.from_status,
            to_status: h.to_status,
            changed_by: h.changed_by,
            note: h.note,
            changed_at: h.changed_at.toISOString(),
          })),
          notes: notes.map((n) => ({ author: n.author, note: n.note, created_at: n.created_at.toISOString() })),
        };
      }
      if (q.client_id !== undefined && !inScope(user, q.client_id))
        throw forbidden('Access to this client is not allowed');
      await notifyExpiringSessions(ctx);
      return listSessions(ctx, {
        clientIds: user.clientIds,
        clientId: q.client_id,
        status: q.status,
        target: q.target,
        limit: q.limit ?? 50,
        cursor: q.cursor,
      });
    },
  );
}
