import { SessionsRevokedResponse } from '@svc/protocol';
import type { App, AppContext } from '../../../context.ts';
import { responses } from '../../../http/responses.ts';
import { revokeSessionsOf } from '../../revocation.ts';
import { identityUserOf, requireBearer } from '../bearer.ts';

/** POST /identity/user/sessions/revoke: sign out everywhere; the caller's own token ends too. */
export default function register(app: App, ctx: AppContext): void {
  app.post(
    '/user/sessions/revoke',
    {
      preHandler: requireBearer(ctx),
      schema: {
        operationId: 'revokeOwnSessions',
        tags: ['identity'],
        summary: "Sign out everywhere: end every session of the token's user",
        security: [{ bearer: [] }],
        response: responses({ 200: SessionsRevokedResponse }, 401),
      },
    },
    async (request) => {
      const user = identityUserOf(request);
      return { ok: true as const, revoked_sessions: await revokeSessionsOf(ctx, user, user.id) };
    },
  );
}
