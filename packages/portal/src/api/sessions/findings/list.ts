import { type TSchema, Type } from '@sinclair/typebox';
import { AmbiguousSessionBody, ErrorBody, FindingsQuery, FindingsResponse } from '@svc/protocol';
import type { FastifyRequest } from 'fastify';
import { resolveCredential } from '../../../auth/credentials.ts';
import type { App, AppContext } from '../../../context.ts';
import { accessSession, parseSessionId } from '../../../sessions/access.ts';
import { listFindings } from '../../../sessions/findings.ts';
import type { SessionRow } from '../../../sessions/queries.ts';

export const SessionPath = Type.Object({ session_id: Type.String({ maxLength: 256 }) });

/** The answers of a read under /sessions/{session_id}/: `ok`, the error body, 409 for an ambiguous id. */
export const sessionReadResponses = (ok: TSchema) => ({
  200: ok,
  ...Object.fromEntries([400, 401, 403, 404, 500].map((code) => [code, ErrorBody])),
  409: AmbiguousSessionBody,
});

/** The path's session as download scopes it: id checked first (400), then the credential, then scope (404, 409). */
export async function pathSession(
  ctx: AppContext,
  request: FastifyRequest,
  where: { session_id: string; client_id?: string | undefined },
): Promise<SessionRow> {
  const sessionId = parseSessionId(where.session_id, 'session_id');
  const caller = await resolveCredential(ctx, request, 'download');
  return accessSession(ctx, caller, sessionId, { clientId: where.client_id });
}

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
