import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { AppContext } from '../../context.ts';
import { forbidden, HttpError } from '../../http/errors.ts';
import { findUserById, type UserRow } from '../users.ts';

declare module 'fastify' {
  interface FastifyRequest {
    identityUser: UserRow | null;
  }
}

const bearerRequired = () =>
  new HttpError(401, 'Unauthorized', { headers: { 'www-authenticate': 'Bearer realm="svc-identity"' } });

/**
 * Identity provider calls use an ordinary bearer scheme (SPEC: they are not portal
 * functions). The token must be one of ours and its user must still exist.
 */
export function requireBearer(ctx: AppContext, opts: { admin?: boolean } = {}): preHandlerAsyncHookHandler {
  return async (request) => {
    const m = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
    if (!m?.[1]) throw bearerRequired();
    const payload = await ctx.tokens.verify(m[1]);
    const user = payload?.sub ? await findUserById(ctx.db, payload.sub) : undefined;
    if (!user) throw bearerRequired();
    if (opts.admin && user.role !== 'admin') throw forbidden('Admin access required');
    request.identityUser = user;
  };
}

export function identityUserOf(request: FastifyRequest): UserRow {
  if (!request.identityUser) throw new Error('route is missing requireBearer');
  return request.identityUser;
}
