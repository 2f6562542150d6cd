import type { FastifyRequest } from 'fastify';
import type { Permission } from '@svc/protocol';
import type { AppContext } from '../context.ts';
import { HttpError, insufficientPermissions, unauthorized } from '../http/errors.ts';
import { authorizeKey, KEY_MESSAGES } from './api-keys.ts';
import { API_KEY_HEADER, IDENTITY_TOKEN_HEADER, lookupKey, refuseAuthorizationHeader } from './guards.ts';
import type { Principal } from './principal.ts';
import { resolveUser } from './users.ts';

function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s.trim() === '' ? undefined : s.trim();
}

/**
 * For endpoints that accept either credential (session download, status, delete): an
 * identity JWT in X-Identity-Token wins, else an x-api-key. Returns null when neither is
 * present; a present but bad credential is refused (plain 401 for a JWT, the key's own
 * message for a key).
 */
export async function resolveCredential(
  ctx: AppContext,
  request: FastifyRequest,
  permission?: Permission,
): Promise<Principal | null> {
  refuseAuthorizationHeader(request);
  let principal: Principal;
  const token = header(request, IDENTITY_TOKEN_HEADER);
  if (token !== undefined) {
    const user = await resolveUser(ctx, token);
    if (user === null) throw unauthorized();
    principal = user;
  } else {
    const key = header(request, API_KEY_HEADER);
    if (key === undefined) return null;
    const result = authorizeKey(await lookupKey(ctx, request, key), ctx.now());
    if (!result.ok) throw new HttpError(403, KEY_MESSAGES[result.failure]);
    principal = result.principal;
  }
  if (permission && !principal.permissions.has(permission)) throw insufficientPermissions(permission);
  return principal;
}
