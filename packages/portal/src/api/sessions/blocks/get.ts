import { AmbiguousSessionBody, ErrorBody, FindingDetailQuery, SessionBlocksResponse } from '@svc/protocol';
import { resolveCredential } from '../../../auth/credentials.ts';
import type { App, AppContext } from '../../../context.ts';
import { accessSession, parseSessionId } from '../../../sessions/access.ts';
import { sessionBlocks } from '../../../sessions/findings.ts';
import { SessionPath } from '../findings/list.ts';

/**
 * GET /api/sessions/{session_id}/blocks[?client_id=] — the topology and ORC 9.64 blocks of
 * the stored session file, so that the session view draws them without downloading the
 * file. Scoped like the findings list.
 */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/sessions/:session_id/blocks',
    {
      schema: {
        operationId: 'getSessionBlocks',
        tags: ['sessions'],
        summary: "The session file's topology and ORC 9.64 blocks",
        security: [{ identityToken: [] }, { apiKey: [] }],
        params: SessionPath,
        querystring: FindingDetailQuery,
        response: {
          200: SessionBlocksResponse,
          ...Object.fromEntries([400, 401, 403, 404, 500].map((code) => [code, ErrorBody])),
          409: AmbiguousSessionBody,
        },
      },
    },
    async (request) => {
      const sessionId = parseSessionId(request.params.session_id, 'session_id');
      const caller = await resolveCredential(ctx, request, 'download');
      const session = await accessSession(ctx, caller, sessionId, { clientId: request.query.client_id });
      return sessionBlocks(ctx, session);
    },
  );
}
