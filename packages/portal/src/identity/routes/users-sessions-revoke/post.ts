import { SessionsRevokedResponse, UserIdQuery } from '@svc/protocol';
import type { App, AppContext } from '../../../context.ts';
import { responses } from '../../../http/responses.ts';
import { revokeSessionsOf } from '../../revocation.ts';
import { identityUserOf, requireBearer } from '../bearer.ts';

/** POST /identity/admin/users/sessions/revoke?id=: end every session of another user (audited). */
export default function register(app: App, ctx: AppContext): void {
  app.post(
    '/admin/users/sessions/revoke',
    {
      preHandler: requireBearer(ctx, { admin: true }),
      schema: {
        operationId: 'revokeUserSessions',
        tags: ['identity'],
        summary: 'End every session of a user (sign the user out everywhere)',
        security: [{ bearer: [] }],
        querystring: UserIdQuery,
        response: responses({ 200: SessionsRevokedResponse }, 400, 401, 403, 404),
      },
    },
    async (request) => ({
      ok: true as const,
      revoked_sessions: await revokeSessionsOf(ctx, identityUserOf(request), request.query.id),
    }),
  );
}
