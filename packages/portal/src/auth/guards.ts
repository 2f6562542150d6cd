import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { Permission } from '@svc/protocol';
import type { AppContext } from '../context.ts';
import { forbidden, HttpError, insufficientPermissions, unauthorized } from '../http/errors.ts';
import { authorizeKey, KEY_MESSAGES, type KeyLookup } from './api-keys.ts';
import type { LegacyPrincipal, LicensePrincipal, Principal, UserPrincipal } from './principal.ts';
import { resolveUser } from './users.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export const API_KEY_HEADER = 'x-api-key';
export const IDENTITY_TOKEN_HEADER = 'x-identity-token';

function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s.trim() === '' ? undefined : s.trim();
}

/**
 * SPEC rule 1: a JWT never travels in `Authorization` on /api/*. app.ts refuses the header
 * at the edge, but that hook matches the raw URL, and an encoded path such as
 * `/%61pi/licenses` still routes to an /api handler; every guard checks again so such a
 * request gets the same plain 401 and never reaches a handler.
 */
export function refuseAuthorizationHeader(request: FastifyRequest): void {
  if (request.headers.authorization !== undefined) throw unauthorized();
}

/**
 * Attach guards as `onRequest` hooks, so authentication runs before the body is parsed and
 * validated: an unauthenticated caller gets 401 (not a 400 describing the body), and no
 * body is read for it. They also work as `preHandler` hooks.
 */
export interface KeyAuthOptions {
  permission?: Permission;
  /** Status for a missing or failing key: SPEC uses 403 for upload, 401 for refresh. */
  failStatus?: 401 | 403;
}

/**
 * The one place an x-api-key is looked up for a request. D18: the legacy shared key is
 * deprecated, so every use of it is logged at warning level with the route (never the key).
 */
export async function lookupKey(ctx: AppContext, request: FastifyRequest, key: string): Promise<KeyLookup> {
  const lookup = await ctx.keys.lookupFrom(key, request.ip);
  if (lookup.kind === 'legacy')
    request.log.warn(
      { route: `${request.method} ${request.routeOptions.url ?? request.url.split('?')[0]}` },
      'legacy shared key used',
    );
  return lookup;
}

/** `x-api-key` authentication: a license key or the legacy shared key. */
export function requireKey(ctx: AppContext, opts: KeyAuthOptions = {}): preHandlerAsyncHookHandler {
  const status = opts.failStatus ?? 403;
  return async (request) => {
    refuseAuthorizationHeader(request);
    const key = header(request, API_KEY_HEADER);
    if (key === undefined) throw new HttpError(status, KEY_MESSAGES.missing);
    const result = authorizeKey(await lookupKey(ctx, request, key), ctx.now());
    if (!result.ok) throw new HttpError(status, KEY_MESSAGES[result.failure]);
    if (opts.permission && !result.principal.permissions.has(opts.permission))
      throw insufficientPermissions(opts.permission);
    request.principal = result.principal;
  };
}

export interface UserAuthOptions {
  permission?: Permission;
  /** Endpoints SPEC documents as "admin only": scoped users get 403 whatever their tier. */
  adminOnly?: boolean;
}

/** Admin identity JWT in `X-Identity-Token` (never `Authorization`, which is refused at the edge). */
export function requireUser(ctx: AppContext, opts: UserAuthOptions = {}): preHandlerAsyncHookHandler {
  return async (request) => {
    refuseAuthorizationHeader(request);
    const token = header(request, IDENTITY_TOKEN_HEADER);
    if (token === undefined) throw unauthorized();
    const user = await resolveUser(ctx, token);
    if (user === null) throw unauthorized();
    if (opts.adminOnly && !user.admin) throw forbidden('Admin access required');
    if (opts.permission && !user.permissions.has(opts.permission)) throw insufficientPermissions(opts.permission);
    request.principal = user;
  };
}

export function userOf(request: FastifyRequest): UserPrincipal {
  const p = request.principal;
  if (p?.kind !== 'user') throw new Error('route is missing requireUser');
  return p;
}

export function keyHolderOf(request: FastifyRequest): LicensePrincipal | LegacyPrincipal {
  const p = request.principal;
  if (p?.kind !== 'license' && p?.kind !== 'legacy') throw new Error('route is missing requireKey');
  return p;
}
