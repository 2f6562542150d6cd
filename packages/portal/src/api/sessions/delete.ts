import { AmbiguousSessionBody, DeleteSessionResponse, SessionQuery } from '@svc/protocol';
import { resolveCredential } from '../../auth/credentials.ts';
import { actorOf } from '../../auth/principal.ts';
import type { App, AppContext } from '../../context.ts';
import { unauthorized } from '../../http/errors.ts';
import { responses } from '../../http/responses.ts';
import { accessSession, parseSessionId } from '../../sessions/access.ts';
import { removeSession } from '../../sessions/delete.ts';
import { presentDeleted } from '../../sessions/present.ts';

/**
 * DELETE /api/sessions?session=<id>[&client_id=]: every file and row of the session (docs/api.md#sessions).
 * Credential: an in-scope JWT, or a key of the session's client (docs/api.md#ids-are-per-client: another client's id is a 404).
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
      const principal = await resolveCredential(ctx, request, 'update:status');
      if (principal === null) throw unauthorized();
      const session = await accessSession(ctx, principal, sessionId, { clientId: request.query.client_id });
      await removeSession(ctx, { clientId: session.client_id, sessionId }, actorOf(principal));
      return presentDeleted(sessionId);
    },
  );
}
