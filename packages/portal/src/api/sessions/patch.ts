import { AmbiguousSessionBody, SessionQuery, UpdateSessionBody, UpdateSessionResponse } from '@svc/protocol';
import { resolveCredential } from '../../auth/credentials.ts';
import type { App, AppContext } from '../../context.ts';
import { unauthorized } from '../../http/errors.ts';
import { responses } from '../../http/responses.ts';
import { parseSessionId } from '../../sessions/access.ts';
import { presentStatusChange } from '../../sessions/present.ts';
import { updateSessionStatus } from '../../sessions/status.ts';

/**
 * PATCH /api/sessions?session=<id> `{status, note?}` (docs/api.md#sessions): the review status, one of new,
 * in_review, resolved, archived; any status may follow any other. Credential: an in-scope
 * JWT with update:status; a key gets 403 (sessions/key-limits.ts); `client_id` names the
 * client when the id exists under several (docs/api.md#ids-are-per-client).
 */
export default function register(app: App, ctx: AppContext): void {
  app.patch(
    '/sessions',
    {
      schema: {
        operationId: 'updateSessionReviewStatus',
        tags: ['sessions'],
        summary: 'Change the review status of a session',
        description:
          'Takes an identity token with update:status. A scanner key (x-api-key) gets 403: a key cannot archive a session or change its review status.',
        security: [{ identityToken: [] }],
        querystring: SessionQuery,
        body: UpdateSessionBody,
        response: responses({ 200: UpdateSessionResponse, 409: AmbiguousSessionBody }, 400, 401, 403, 404),
      },
    },
    async (request) => {
      const sessionId = parseSessionId(request.query.session);
      const principal = await resolveCredential(ctx, request, 'update:status');
      if (principal === null) throw unauthorized();
      const { status, note } = request.body;
      const outcome = await updateSessionStatus(ctx, principal, {
        sessionId,
        clientId: request.query.client_id,
        status,
        note,
      });
      return presentStatusChange(sessionId, status, outcome);
    },
  );
}
