import { FindingsQuery, FindingsResponse } from '@svc/protocol';
import type { App, AppContext } from '../../../context.ts';
import { pathSession, SessionPath, sessionReadResponses } from '../session-path.ts';
import { listFindings } from '../../../sessions/findings.ts';

/**
 * GET /api/sessions/{session_id}/findings[?client_id=&severity=&status=&exception=&host=&port=&cve=&q=&sort=&order=&limit=&cursor=]
 * — one page of a session's findings from the findings index, with the total matching the
 * filters. Scoped like download: an admin any session, a scoped user or a key its own
 * clients (another client's session: 404), `client_id` when the id exists under several (409).
 *
 * Checklist: validate the id and the query (400, before any lookup) → credential → the
 * session within scope → index it if the stored file is newer than its index → page.
 */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/sessions/:session_id/findings',
    {
      schema: {
        operationId: 'listSessionFindings',
        tags: ['sessions'],
        summary: "A page of a session's findings: filtered, sorted, with a cursor to the next",
        security: [{ identityToken: [] }, { apiKey: [] }],
        params: SessionPath,
        querystring: FindingsQuery,
        response: sessionReadResponses(FindingsResponse),
      },
    },
    async (request) =>
      listFindings(ctx, await pathSession(ctx, request, { ...request.params, ...request.query }), request.query),
  );
}
