import { AmbiguousSessionBody, RotateShareResponse, SessionQuery } from '@svc/protocol';
import { requireUser, userOf } from '../../../auth/guards.ts';
import { actorOf } from '../../../auth/principal.ts';
import type { App, AppContext } from '../../../context.ts';
import { responses } from '../../../http/responses.ts';
import { accessSession, parseSessionId } from '../../../sessions/access.ts';
import { presentRotatedShare } from '../../../sessions/present.ts';
import { rotateShareToken } from '../../../sessions/share.ts';

/**
 * POST /api/sessions/share?session=<id>[&client_id=]: a new share token for the
 * session; the previous one answers 404 at once everywhere. Also re-issues a revoked link.
 * Identity JWT only (an admin, or a user whose scope has the session's client), permission
 * `update:status`; a session out of scope is a 404 like a missing one. Audited as `share_rotated`.
 */
export default function register(app: App, ctx: AppContext): void {
  app.post(
    '/sessions/share',
    {
      onRequest: requireUser(ctx, { permission: 'update:status' }),
      schema: {
        operationId: 'rotateShareLink',
        tags: ['sessions'],
        summary: "Rotate a session's share link (new token; the old one stops working)",
        security: [{ identityToken: [] }],
        querystring: SessionQuery,
        response: responses({ 200: RotateShareResponse, 409: AmbiguousSessionBody }, 400, 401, 403, 404),
      },
    },
    async (request) => {
      const sessionId = parseSessionId(request.query.session);
      const user = userOf(request);
      const session = await accessSession(ctx, user, sessionId, { clientId: request.query.client_id });
      const ref = { clientId: session.client_id, sessionId };
      const token = await rotateShareToken(ctx, { ref, actor: actorOf(user) });
      return presentRotatedShare(ref, token, ctx.config.baseUrl);
    },
  );
}
