import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { AppContext } from '../../context.ts';
import { DomainError } from '../../domain/errors.ts';
import { bearerTokenOf, credentialsOf } from '../../http/credentials.ts';
import { HttpError } from '../../http/errors.ts';
import { findUserById } from '../queries.ts';
import type { UserRow } from '../users.ts';

declare module 'fastify' {
  interface FastifyRequest {
    identityUser: UserRow | null;
  }
}

/** The account an access token of ours belongs to; undefined for a bad token or a deleted user. */
async function accountOfToken(ctx: AppContext, token: string): Promise<UserRow | undefined> {
  const payload = await ctx.tokens.verify(token);
  return payload?.sub ? findUserById(ctx.db, payload.sub) : undefined;
}

const bearerRequired = () =>
  new HttpError(401, 'Unauthorized', { headers: { 'www-authenticate': 'Bearer realm="svc-identity"' } });

/**
 * Identity provider calls use an ordinary bearer scheme (they are not portal
 * functions). The token must be one of ours and its user must still exist.
 */
export function requireBearer(ctx: AppContext, opts: { admin?: boolean } = {}): preHandlerAsyncHookHandler {
  return async (request) => {
    const token = bearerTokenOf(credentialsOf(request.headers));
    if (token === undefined) throw bearerRequired();
    const user = await accountOfToken(ctx, token);
    if (!user) throw bearerRequired();
    if (opts.admin && user.role !== 'admin') throw new DomainError('forbidden.admin_only', 'Admin access required');
    request.identityUser = user;
  };
}

export function identityUserOf(request: FastifyRequest): UserRow {
  if (!request.identityUser) throw new Error('route is missing requireBearer');
  return request.identityUser;
}
