import { AmbiguousSessionBody, RevokeShareResponse, SessionQuery } from '@svc/protocol';
import { requireUser, userOf } from '../../../auth/guards.ts';
import { actorOf } from '../../../auth/principal.ts';
import type { App, AppContext } from '../../../context.ts';
import { responses } from '../../../http/responses.ts';
import { accessSession, parseSessionId } from '../../../sessions/access.ts';
import { presentRevokedShare } from '../../../sessions/present.ts';
import { revokeShareToken } from '../../../sessions/share.ts';

/**
 * DELETE /api/sessions/share?session=<id>[&client_id=]: the session's share link
 * stops working at once (/api/share, /share/ and download?token= answer 404) and the session
 * has none until POST /api/sessions/share issues a new one. Identity JWT only (an admin, or
 * a user whose scope has the session's client), permission `update:status`; out of scope is
 * a 404. Audited as `share_revoked`; revoking a session without a link changes nothing.
 */
export default function register(app: App, ctx: AppContext): void {
  app.delete(
    '/sessions/share',
    {
      onRequest: requireUser(ctx, { permission: 'update:status' }),
      schema: {
        operationId: 'revokeShareLink',
        tags: ['sessions'],
        summary: "Revoke a session's share link",
        security: [{ identityToken: [] }],
        querystring: SessionQuery,
        response: responses({ 200: RevokeShareResponse, 409: AmbiguousSessionBody }, 400, 401, 403, 404),
      },
    },
    async (request) => {
      const sessionId = parseSessionId(request.query.session);
      const user = userOf(request);
      const session = await accessSession(ctx, user, sessionId, { clientId: request.query.client_id });
      const ref = { clientId: session.client_id, sessionId };
      const revoked = await revokeShareToken(ctx, { ref, actor: actorOf(user) });
      return presentRevokedShare(ref, revoked);
    },
  );
}
