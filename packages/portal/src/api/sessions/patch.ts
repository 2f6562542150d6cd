import { AmbiguousSessionBody, SessionQuery, UpdateSessionBody, UpdateSessionResponse } from '@svc/protocol';
import { resolveCredential } from '../../auth/credentials.ts';
import { actorOf, scopeOf } from '../../auth/principal.ts';
import type { App, AppContext } from '../../context.ts';
import { badRequest, notFound, unauthorized, type HttpError } from '../../http/errors.ts';
import { responses } from '../../http/responses.ts';
import { accessSession, parseSessionId } from '../../sessions/access.ts';
import { storable } from '../../sessions/derive.ts';
import { changeStatus } from '../../sessions/status.ts';

/**
 * PATCH /api/sessions?session=<id> `{status, note?}` (D5): the review status, one of new,
 * in_review, resolved, archived; any status may follow any other. Every change is kept
 * in the status history and audited/emitted as `status_changed`; setting the current
 * status again only records the note. Credential: an in-scope JWT, or a key of the
 * session's client; `client_id` names the client when the id exists under several (D17).
 */
export default function register(app: App, ctx: AppContext): void {
  app.patch(
    '/sessions',
    {
      schema: {
        operationId: 'updateSessionReviewStatus',
        tags: ['sessions'],
        summary: 'Change the review status of a session',
        security: [{ identityToken: [] }, { apiKey: [] }],
        querystring: SessionQuery,
        body: UpdateSessionBody,
        response: responses({ 200: UpdateSessionResponse, 409: AmbiguousSessionBody }, 400, 401, 403, 404),
      },
    },
    async (request) => {
      const sessionId = parseSessionId(request.query.session);
      const clientId = request.query.client_id;
      const principal = await resolveCredential(ctx, request, 'update:status');
      if (principal === null) throw unauthorized();
      const { status, note } = request.body;
      // The scope check is part of the statement; only a refusal asks again which answer
      // it is (404, or 409 for an ambiguous id, as every session endpoint gives them), before a bad note's 400.
      const refuse = async (err: HttpError): Promise<never> => {
        await accessSession(ctx, request, sessionId, { permission: 'update:status', clientId });
        throw err;
      };
      if (note !== undefined && !storable(note))
        return refuse(badRequest('Invalid note: NUL characters and unpaired surrogates are not allowed'));
      const now = ctx.now();
      const changed = await changeStatus(ctx.db, {
        sessionId,
        clientId,
        scope: scopeOf(principal),
        status,
        note,
        actor: actorOf(principal),
        now,
      });
      if (!changed) return refuse(notFound('Session not found'));
      const { previous, event } = changed;
      if (event) ctx.events.publish(event);
      return {
        success: true as const,
        session_id: sessionId,
        previous_status: previous,
        status,
        changed: event !== null,
        changed_at: now.toISOString(),
      };
    },
  );
}
