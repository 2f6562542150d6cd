import { recordAuditEvent } from '../audit/record.ts';
import type { AppContext } from '../context.ts';
import { DomainError } from '../domain/errors.ts';
import { familyIdOfRefreshToken, lockUserForUpdate, revokeFamily, revokeUserFamilies } from './queries.ts';
import { hashRefreshToken } from './tokens.ts';
import type { UserRow } from './users.ts';

/**
 * Sign-out (RFC 7009): `token` is a refresh token or an access token of ours; either way its
 * whole family ends, so the refresh token stops refreshing and the family's access tokens stop
 * verifying on the next request. Holding the token is the only proof needed: anyone who has
 * it could use it. An unknown, expired or already revoked token changes nothing, and the
 * caller is told nothing about which it was. `hint` only decides which kind is tried first.
 */
export async function revokeToken(ctx: AppContext, token: string, hint: string | undefined): Promise<void> {
  const asRefresh = async () => {
    const found = await familyIdOfRefreshToken(ctx.db, hashRefreshToken(token));
    if (!found) return false;
    await revokeFamily(ctx.db, found.family_id, ctx.now());
    return true;
  };
  const asAccess = async () => {
    // Only a JWT can be one of our access tokens; verify() also refuses a revoked family.
    if (token.split('.').length !== 3) return false;
    const claims = await ctx.tokens.verify(token);
    if (typeof claims?.['sid'] !== 'string') return false;
    await revokeFamily(ctx.db, claims['sid'], ctx.now());
    return true;
  };
  if (hint === 'access_token') {
    if (!(await asAccess())) await asRefresh();
  } else if (!(await asRefresh())) await asAccess();
}

/**
 * "Sign out everywhere": every family of the user ends, whoever holds its tokens. The user's
 * row is locked first, so a refresh running at the same time (which share-locks it) either
 * finishes before, and its new token is revoked here, or after, and finds its token revoked.
 * Audited, with `actor` the user itself or the admin who did it.
 */
export async function revokeSessionsOf(ctx: AppContext, actor: UserRow, userId: string): Promise<number> {
  const { sessions, event } = await ctx.db.transaction().execute(async (trx) => {
    const user = await lockUserForUpdate(trx, userId);
    if (!user) throw new DomainError('not_found.user', 'User not found');
    const sessions = await revokeUserFamilies(trx, user.id, ctx.now());
    const event = await recordAuditEvent(trx, {
      event_type: 'user_sessions_revoked',
      actor: actor.email,
      data: { user_id: user.id, email: user.email, sessions },
    });
    return { sessions, event };
  });
  ctx.events.publish(event);
  return sessions;
}
