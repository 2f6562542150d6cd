import { AmbiguousSessionBody, DeleteSessionResponse, SessionQuery } from '@svc/protocol';
import { resolveCredential } from '../../auth/credentials.ts';
import type { App, AppContext } from '../../context.ts';
import { unauthorized } from '../../http/errors.ts';
import { responses } from '../../http/responses.ts';
import { accessSession, parseSessionId } from '../../sessions/access.ts';
import { removeSession } from '../../sessions/delete.ts';
import { KEY_DELETE_WINDOW_MINUTES } from '../../sessions/key-limits.ts';
import { presentDeleted } from '../../sessions/present.ts';

/**
 * DELETE /api/sessions?session=<id>[&client_id=]: every file and row of the session (docs/api.md#sessions).
 * Credential: an in-scope JWT with update:status; a key only within its limits (sessions/key-limits.ts),
 * else 403 saying why (docs/api.md#ids-are-per-client: another client's id is a 404).
 */
export default function register(app: App, ctx: AppContext): void {
  app.delete(
    '/sessions',
    {
      schema: {
        operationId: 'deleteSession',
        tags: ['sessions'],
        summary: 'Delete a session and its files',
        description: `Takes an identity token with update:status. A scanner key (x-api-key) may delete only a session it uploaded itself, within ${KEY_DELETE_WINDOW_MINUTES} minutes of its first upload, while nobody has triaged it (no review status change or note, no remediation update naming it, no finding of its target changed by a person since); otherwise 403 saying which. Findings of record keep their decisions.`,
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
      await removeSession(ctx, session, principal);
      return presentDeleted(sessionId);
    },
  );
}
