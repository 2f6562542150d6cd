import { ShareQuery, ShareResponse } from '@svc/protocol';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';
import { presentShare } from '../../sessions/present.ts';
import { parseShareToken, sharedSession } from '../../sessions/share.ts';
import { sharedTriage } from '../../sessions/shared-triage.ts';

/**
 * GET /api/share?token=<64 hex> (docs/api.md#sessions): the summary of the one session the share token
 * opens, its numbers as its triage stands today (docs/findings-of-record.md#the-share-page). The token is the credential: no key or JWT is needed, and it shows nothing of
 * any other session (no client_id, no blob keys). Missing or malformed token 400;
 * unknown token 404. Never cached, never indexed (`X-Robots-Tag: noindex`).
 */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/share',
    {
      schema: {
        operationId: 'getSharedSession',
        tags: ['sessions'],
        summary: 'Look up a session by its share token',
        security: [{}],
        querystring: ShareQuery,
        response: responses({ 200: ShareResponse }, 400, 404),
      },
      // On every answer, refusals included: search engines index nothing of a share link.
      onRequest: async (_request, reply) => {
        void reply.header('x-robots-tag', 'noindex');
      },
    },
    async (request, reply) => {
      const token = parseShareToken(request.query.token, { required: true })!;
      const row = await sharedSession(ctx, token);
      const triage = await sharedTriage(ctx, row);
      void reply.header('cache-control', 'private, no-store').header('referrer-policy', 'no-referrer');
      return presentShare(row, triage);
    },
  );
}
