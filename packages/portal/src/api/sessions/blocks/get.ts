import { FindingDetailQuery, SessionBlocksResponse } from '@svc/protocol';
import type { App, AppContext } from '../../../context.ts';
import { sessionBlocks } from '../../../sessions/findings.ts';
import { pathSession, SessionPath, sessionReadResponses } from '../session-path.ts';

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
        response: sessionReadResponses(SessionBlocksResponse),
      },
    },
    async (request) => sessionBlocks(ctx, await pathSession(ctx, request, { ...request.params, ...request.query })),
  );
}
