import { PERMISSIONS, permissionsOf, type Permission } from '@svc/protocol';
import type { AppContext } from '../context.ts';
import { findUserById } from '../identity/queries.ts';
import { highestActiveTier } from '../licenses/queries.ts';
import type { UserPrincipal } from './principal.ts';

const ALL_PERMISSIONS: ReadonlySet<Permission> = new Set(PERMISSIONS);

function stringArray(v: unknown): string[] | undefined {
  return Array.isArray(v) && v.every((x) => typeof x === 'string') ? v : undefined;
}

/**
 * A verified token becomes a user principal (docs/api.md#credentials). For the portal's own identity provider
 * the role and client_ids come from the user row, so a change or deletion takes effect at
 * once; for an external provider they come from the token's claims.
 */
export async function resolveUser(ctx: AppContext, token: string): Promise<UserPrincipal | null> {
  const payload = await ctx.tokens.verify(token);
  if (!payload?.sub) return null;

  let role: unknown;
  let clientIds: string[] | undefined;
  let email: string | null;
  if (ctx.tokens.mode === 'local') {
    const user = await findUserById(ctx.db, payload.sub);
    if (!user) return null;
    role = user.role;
    clientIds = user.client_ids;
    email = user.email;
  } else {
    role = payload['role'];
    clientIds = stringArray(payload['client_ids']);
    email = typeof payload['email'] === 'string' ? payload['email'] : null;
  }

  // No role and no client_ids claims, or role admin: an administrator with every permission.
  const admin = role === 'admin' || (role === undefined && payload['client_ids'] === undefined);
  if (admin)
    return {
      kind: 'user',
      subject: payload.sub,
      email,
      admin: true,
      clientIds: null,
      tier: 'msp',
      permissions: ALL_PERMISSIONS,
    };

  // A scoped user: only its client ids (none if the claim is missing or malformed).
  const scope = clientIds ?? [];
  const tier = await highestActiveTier(ctx.db, scope, ctx.now());
  return {
    kind: 'user',
    subject: payload.sub,
    email,
    admin: false,
    clientIds: scope,
    tier,
    permissions: permissionsOf(tier),
  };
}
