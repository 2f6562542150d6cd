import { MeResponse } from '@svc/protocol';
import { requireUser, userOf } from '../../auth/guards.ts';
import { presentCaller } from '../../auth/principal.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';

/**
 * GET /api/me: the signed-in user's role, clients, tier and permissions as the portal enforces
 * them, so the console offers only what the user can use (a scoped user's tier lives in the
 * database, not in the token).
 */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/me',
    {
      onRequest: requireUser(ctx),
      schema: {
        operationId: 'getCaller',
        tags: ['identity'],
        summary: "The signed-in user's permissions",
        security: [{ identityToken: [] }],
        response: responses({ 200: MeResponse }, 401),
      },
    },
    async (request) => presentCaller(userOf(request)),
  );
}
