import { AmbiguousSessionBody, DeleteSessionResponse, SessionQuery } from '@svc/protocol';
import { actorOf } from '../../auth/principal.ts';
import type { App, AppContext } from '../../context.ts';
import { notFound } from '../../http/errors.ts';
import { responses } from '../../http/responses.ts';
import { accessSession, parseSessionId } from '../../sessions/access.ts';
import { deleteSession } from '../../sessions/delete.ts';

/**
 * DELETE /api/sessions?session=<id>[&client_id=]: every file and row of the session (D5).
 * Credential: an in-scope JWT, or a key of the session's client (D17: another client's id is a 404).
 */
export default function register(app: App, ctx: AppContext): void {
  app.delete(
    '/sessions',
    {
      schema: {
        operationId: 'deleteSession',
        tags: ['sessions'],
        summary: 'Delete a session and its files',
        security: [{ identityToken: [] }, { apiKey: [] }],
        querystring: SessionQuery,
        response: responses({ 200: DeleteSessionResponse, 409: AmbiguousSessionBody }, 400, 401, 403, 404),
      },
    },
    async (request) => {
      const sessionId = parseSessionId(request.query.session);
      const { principal, session } = await accessSession(ctx, request, sessionId, {
        permission: 'update:status',
        clientId: request.query.client_id,
      });
      if (!(await deleteSession(ctx, { clientId: session.client_id, sessionId }, actorOf(principal!))))
        throw notFound('Session not found');
      return { success: true as const, session_id: sessionId };
    },
  );
}
