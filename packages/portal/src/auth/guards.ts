import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { Permission } from '@svc/protocol';
import type { AppContext } from '../context.ts';
import { credentialsOf } from '../http/credentials.ts';
import {
  authenticateKey,
  authenticateUser,
  type KeyCaller,
  refuseAuthorization,
  type UserAuthOptions,
} from './authenticate.ts';
import type { LegacyPrincipal, LicensePrincipal, Principal, UserPrincipal } from './principal.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

/** The request's address and route, for key throttling and the legacy-key warning. */
export function keyCallerOf(request: FastifyRequest): KeyCaller {
  return {
    address: request.ip,
    connection: request.raw.socket,
    onLegacyKey: () =>
      request.log.warn(
        { route: `${request.method} ${request.routeOptions.url ?? request.url.split('?')[0]}` },
        'legacy shared key used',
      ),
  };
}

/**
 * Guards run as `onRequest` hooks, before the body is parsed and validated: an
 * unauthenticated caller gets 401 (not a 400 describing the body), and no body is read for
 * it. They also work as `preHandler` hooks.
 */
export interface KeyGuardOptions {
  permission?: Permission;
  /** Status for a missing or failing key: 403 for upload, 401 for refresh (docs/api.md#credentials). */
  failStatus?: 401 | 403;
}

/** `x-api-key` authentication: a license key or the legacy shared key. */
export function requireKey(ctx: AppContext, opts: KeyGuardOptions = {}): preHandlerAsyncHookHandler {
  const refusal = opts.failStatus === 401 ? 'unauthorized' : 'forbidden';
  return async (request) => {
    const credentials = credentialsOf(request.headers);
    refuseAuthorization(credentials);
    request.principal = await authenticateKey(ctx, credentials.apiKey, keyCallerOf(request), {
      refusal,
      ...(opts.permission ? { permission: opts.permission } : {}),
    });
  };
}

/** Admin identity JWT in `X-Identity-Token` (never `Authorization`). */
export function requireUser(ctx: AppContext, opts: UserAuthOptions = {}): preHandlerAsyncHookHandler {
  return async (request) => {
    const credentials = credentialsOf(request.headers);
    refuseAuthorization(credentials);
    request.principal = await authenticateUser(ctx, credentials.identityToken, opts);
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
