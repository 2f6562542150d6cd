import type { Permission } from '@svc/protocol';
import type { AppContext } from '../context.ts';
import { DomainError, insufficientPermissions } from '../domain/errors.ts';
import type { Credentials } from '../http/credentials.ts';
import { authorizeKey, KEY_MESSAGES, type KeyFailure, type KeyLookup } from './api-keys.ts';
import type { LegacyPrincipal, LicensePrincipal, Principal, UserPrincipal } from './principal.ts';
import { resolveUser } from './users.ts';

/** The one plain 401 for JWT failures: identical whatever was wrong with the credential. */
export const tokenRefused = (): DomainError => new DomainError('unauthorized.token', 'Unauthorized');

/** Where a key came from: the address its failures are counted against, and who to tell of a legacy key. */
export interface KeyCaller {
  address: string;
  /** The connection the key came on (its socket): a key sent again on it is not hashed again. */
  connection?: object;
  /** docs/api.md#credentials: the legacy shared key is deprecated; every use of it is reported (never the key). */
  onLegacyKey: () => void;
}

/** docs/api.md#credentials: a JWT never travels in `Authorization` on /api/*; any such header gets the plain 401. */
export function refuseAuthorization(credentials: Credentials): void {
  if (credentials.authorization !== undefined) throw tokenRefused();
}

/** The one place an x-api-key is looked up: throttled per address, legacy use reported. */
export async function lookupKeyFrom(ctx: AppContext, key: string, caller: KeyCaller): Promise<KeyLookup> {
  const lookup = await ctx.keys.lookupFrom(key, caller.address, caller.connection);
  if (lookup.kind === 'legacy') caller.onLegacyKey();
  return lookup;
}

/** lookupKeyFrom() without waiting, when the key's answer is cached; undefined otherwise. */
export function cachedKeyFrom(ctx: AppContext, key: string, caller: KeyCaller): KeyLookup | undefined {
  const lookup = ctx.keys.cachedFrom(key, caller.address, caller.connection);
  if (lookup?.kind === 'legacy') caller.onLegacyKey();
  return lookup;
}

export interface KeyAuthOptions {
  permission?: Permission;
  /** A missing or failing key is unauthorized (401) or forbidden (403): 403 for upload, 401 for refresh (docs/api.md#credentials). */
  refusal?: 'unauthorized' | 'forbidden';
}

const keyRefused = (failure: KeyFailure, refusal: 'unauthorized' | 'forbidden') =>
  new DomainError(`${refusal}.api_key_${failure}`, KEY_MESSAGES[failure]);

/** A license key or the legacy shared key. */
export async function authenticateKey(
  ctx: AppContext,
  key: string | undefined,
  caller: KeyCaller,
  opts: KeyAuthOptions = {},
): Promise<LicensePrincipal | LegacyPrincipal> {
  const refusal = opts.refusal ?? 'forbidden';
  if (key === undefined) throw keyRefused('missing', refusal);
  const result = authorizeKey(await lookupKeyFrom(ctx, key, caller), ctx.now());
  if (!result.ok) throw keyRefused(result.failure, refusal);
  if (opts.permission && !result.principal.permissions.has(opts.permission))
    throw insufficientPermissions(opts.permission);
  return result.principal;
}

export interface UserAuthOptions {
  permission?: Permission;
  /** Endpoints documented as "admin only": scoped users get 403 whatever their tier. */
  adminOnly?: boolean;
}

/** An identity JWT (X-Identity-Token). */
export async function authenticateUser(
  ctx: AppContext,
  token: string | undefined,
  opts: UserAuthOptions = {},
): Promise<UserPrincipal> {
  if (token === undefined) throw tokenRefused();
  const user = await resolveUser(ctx, token);
  if (user === null) throw tokenRefused();
  if (opts.adminOnly && !user.admin) throw new DomainError('forbidden.admin_only', 'Admin access required');
  if (opts.permission && !user.permissions.has(opts.permission)) throw insufficientPermissions(opts.permission);
  return user;
}

/**
 * For endpoints that accept either credential (session download, status, delete): an
 * identity JWT wins, else an x-api-key. Null when neither is present; a present but bad
 * credential is refused (plain 401 for a JWT, 403 with the key's own message for a key).
 */
export async function authenticateEither(
  ctx: AppContext,
  credentials: Credentials,
  caller: KeyCaller,
  permission?: Permission,
): Promise<Principal | null> {
  refuseAuthorization(credentials);
  let principal: Principal;
  if (credentials.identityToken !== undefined) {
    principal = await authenticateUser(ctx, credentials.identityToken);
  } else {
    if (credentials.apiKey === undefined) return null;
    principal = await authenticateKey(ctx, credentials.apiKey, caller);
  }
  if (permission && !principal.permissions.has(permission)) throw insufficientPermissions(permission);
  return principal;
}
