import { type TSchema, Type } from '@sinclair/typebox';
import { AmbiguousSessionBody, ErrorBody } from '@svc/protocol';
import type { FastifyRequest } from 'fastify';
import { resolveCredential } from '../../auth/credentials.ts';
import type { AppContext } from '../../context.ts';
import { accessSession, parseSessionId } from '../../sessions/access.ts';
import type { SessionRow } from '../../sessions/queries.ts';

/** What the reads under /sessions/{session_id}/ share: the path, their answers, the session they name. */

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
