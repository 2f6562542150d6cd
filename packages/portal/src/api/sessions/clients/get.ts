import { Type } from '@sinclair/typebox';
import { SessionClientsResponse } from '@svc/protocol';
import { requireUser, userOf } from '../../../auth/guards.ts';
import type { App, AppContext } from '../../../context.ts';
import { responses } from '../../../http/responses.ts';
import { sessionClientsFor } from '../../../sessions/listing.ts';

/**
 * GET /api/sessions/clients: the clients that have sessions the caller may see (admins: every
 * client; scoped users: theirs), with the newest client name and the number of sessions, for
 * the console's client picker.
 */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/sessions/clients',
    {
      onRequest: requireUser(ctx, { permission: 'sessions:read' }),
      schema: {
        operationId: 'listSessionClients',
        tags: ['sessions'],
        summary: 'Clients of the sessions the caller may see',
        security: [{ identityToken: [] }],
        querystring: Type.Object({}, { additionalProperties: false }),
        response: responses({ 200: SessionClientsResponse }, 400, 401, 403),
      },
    },
    (request) => sessionClientsFor(ctx, userOf(request)),
  );
}
