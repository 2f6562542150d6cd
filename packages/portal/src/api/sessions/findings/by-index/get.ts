import { Type } from '@sinclair/typebox';
import { FindingDetailQuery, FindingDetailResponse } from '@svc/protocol';
import type { App, AppContext } from '../../../../context.ts';
import { findingDetail } from '../../../../sessions/findings.ts';
import { pathSession, sessionReadResponses } from '../../session-path.ts';

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
        response: sessionReadResponses(FindingDetailResponse),
      },
    },
    async (request) =>
      findingDetail(
        ctx,
        await pathSession(ctx, request, { ...request.params, ...request.query }),
        request.params.index,
      ),
  );
}
