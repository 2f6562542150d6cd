import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { SESSION_ID_PATTERN, type Permission } from '@svc/protocol';
import { resolveCredential } from '../auth/credentials.ts';
import { inScope, type Principal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { badRequest, forbidden, notFound, unauthorized } from '../errors.ts';
import { MAX_SESSION_ID_LENGTH } from './derive.ts';
import type { SessionRow } from './present.ts';

const SESSION_ID = new RegExp(SESSION_ID_PATTERN);

/**
 * Path safety: a session id from a request must match the id pattern before anything
 * touches the database or the blob store (no `..`, slashes, backslashes, NUL, encodings).
 */
export function parseSessionId(value: unknown, param = 'session'): string {
  if (typeof value !== 'string' || value === '') throw badRequest(`Missing ${param} parameter`);
  if (value.length > MAX_SESSION_ID_LENGTH || !SESSION_ID.test(value)) throw badRequest(`Invalid ${param} parameter: must match ${SESSION_ID_PATTERN}`);
  return value;
}

export function findSession(ctx: AppContext, sessionId: string): Promise<SessionRow | undefined> {
  return ctx.db.selectFrom('sessions').selectAll().where('session_id', '=', sessionId).executeTakeFirst();
}

export type SessionAccess = { principal: Principal; session: SessionRow } | { principal: null; session: SessionRow; viaShareToken: true };

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Load a session for a caller. Accepted: a JWT or key whose scope includes the session's
 * client, or (when `shareToken` is allowed) that session's own share token. Missing
 * session 404; out of scope 403 (SPEC); no credential 401.
 */
export async function accessSession(
  ctx: AppContext,
  request: FastifyRequest,
  sessionId: string,
  opts: { permission: Permission; shareToken?: string | undefined; adminOnly?: boolean; jwtOnly?: boolean },
): Promise<SessionAccess> {
  const principal = await resolveCredential(ctx, request, opts.permission);
  if (principal === null) {
    if (opts.shareToken === undefined) throw unauthorized();
    const session = await findSession(ctx, sessionId);
    const token = session ? await ctx.db.selectFrom('share_tokens').select('token').where('session_id', '=', sessionId).executeTakeFirst() : undefined;
    // Same answer for a wrong token and a missing session: a share token reveals nothing else.
    if (!session || !token || !sameToken(token.token, opts.shareToken)) throw notFound('Session not found');
    return { principal: null, session, viaShareToken: true };
  }
  if (opts.jwtOnly && principal.kind !== 'user') throw unauthorized();
  if (opts.adminOnly && !(principal.kind === 'user' && principal.admin)) throw forbidden('Admin access required');
  const session = await findSession(ctx, sessionId);
  if (!session) throw notFound('Session not found');
  if (!inScope(principal, session.client_id)) throw forbidden('Access to this session is not allowed');
  return { principal, session };
}
