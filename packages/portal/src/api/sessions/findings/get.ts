import { Type } from '@sinclair/typebox';
import { AmbiguousSessionBody, ErrorBody, FindingDetailQuery, FindingDetailResponse } from '@svc/protocol';
import { resolveCredential } from '../../../auth/credentials.ts';
import type { App, AppContext } from '../../../context.ts';
import { accessSession, parseSessionId } from '../../../sessions/access.ts';
import { findingDetail } from '../../../sessions/findings.ts';

const FindingPath = Type.Object({
  session_id: Type.String({ maxLength: 256 }),
  index: Type.Integer({ minimum: 0, maximum: 2_147_483_647, description: "the finding row's `index`" }),
});

/**
 * GET /api/sessions/{session_id}/findings/{index}[?client_id=] — one finding with its
 * evidence, references and remediation history (the console's detail panel). Scoped like
 * the findings list; an index the session does not have: 404.
 */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/sessions/:session_id/findings/:index',
    {
      schema: {
        operationId: 'getSessionFinding',
        tags: ['sessions'],
        summary: 'One finding of a session with evidence, references and history',
        security: [{ identityToken: [] }, { apiKey: [] }],
        params: FindingPath,
        querystring: FindingDetailQuery,
        response: {
          200: FindingDetailResponse,
          ...Object.fromEntries([400, 401, 403, 404, 500].map((code) => [code, ErrorBody])),
          409: AmbiguousSessionBody,
        },
      },
    },
    async (request) => {
      const sessionId = parseSessionId(request.params.session_id, 'session_id');
      const caller = await resolveCredential(ctx, request, 'download');
      const session = await accessSession(ctx, caller, sessionId, { clientId: request.query.client_id });
      return findingDetail(ctx, session, request.params.index);
    },
  );
}
