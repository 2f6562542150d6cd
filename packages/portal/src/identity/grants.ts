import { setTimeout } from 'node:timers/promises';
import { storable, type TokenResponse } from '@svc/protocol';
import type { AppContext } from '../context.ts';
import { verifyPassword } from './passwords.ts';
import {
  claimRefreshToken,
  familyOfRefreshToken,
  findUserByNormalizedEmail,
  lockUserForShare,
  refreshTokenOwner,
  refreshTokenUse,
  revokeFamily,
} from './queries.ts';
import type { SigningKey } from './signing-keys.ts';
import { admitLoginAttempt, recordSuccessfulLogin } from './throttle.ts';
import { hashRefreshToken, issueTokens } from './tokens.ts';
import { normalizeEmail } from './users.ts';

/**
 * What the token endpoint's two grants (docs/api.md#identity-provider) come to. `refused`: the grant is invalid (a wrong
 * password, an unknown, expired or revoked refresh token); `locked`: the e-mail may not try
 * from that address for `retryAfter` seconds; `reused`: a rotated refresh token came back,
 * and its family is now revoked.
 */
export type GrantOutcome =
  | { kind: 'issued'; tokens: TokenResponse }
  | { kind: 'refused' }
  | { kind: 'locked'; retryAfter: number }
  | { kind: 'busy'; retryAfter: number }
  | { kind: 'reused' };

export async function passwordGrant(
  ctx: AppContext,
  key: SigningKey,
  login: { username: string; password: string; address: string },
  now: Date,
): Promise<GrantOutcome> {
  // No account has such an e-mail, and PostgreSQL could not even look one up.
  if (!storable(login.username)) return { kind: 'refused' };
  // Counted before the password check (see admitLoginAttempt), so parallel guesses
  // cannot outrun the lock; and for every e-mail, so a lock reveals no account.
  const gate = await admitLoginAttempt(ctx.db, login.username, login.address, now, ctx.config.identity.loginSlowAfter);
  if (!gate.admitted) return { kind: 'locked', retryAfter: gate.retryAfter };
  // Bounded per e-mail after the per-address lock, so locked addresses never take a place in line.
  const email = normalizeEmail(login.username);
  const release = await ctx.loginChecks.enter(email);
  if (release === null)
    return { kind: 'busy', retryAfter: Math.max(1, Math.ceil(ctx.config.identity.loginSlowDelayMs / 1000)) };
  let user: Awaited<ReturnType<typeof findUserByNormalizedEmail>>;
  let ok: boolean;
  try {
    // Many failures across addresses: slow every attempt down, the right one too, but never
    // refuse it. Inside the slot, so parallel attempts are slowed one after another.
    if (gate.slow) await setTimeout(ctx.config.identity.loginSlowDelayMs);
    user = await findUserByNormalizedEmail(ctx.db, email);
    ok = await verifyPassword(user?.password_hash ?? null, login.password);
  } finally {
    release();
  }
  if (!user || !ok) return { kind: 'refused' };
  await recordSuccessfulLogin(ctx.db, login.username, login.address);
  return { kind: 'issued', tokens: await issueTokens(ctx.db, key, ctx.config.baseUrl, user, now) };
}

/**
 * Rotation: a refresh token is good exactly once, within its family's absolute lifetime
 * (counted from the login, however often it rotated). One transaction from claim to the new
 * token's insert: the claimed row stays locked until the new token exists, so a concurrent
 * replay waits and then revokes the family *including* the new token; and the user's row is
 * share-locked first, so a password change or deletion (which lock it for update) either
 * happens before (the claim then finds the token revoked) or after (and revokes the new token).
 */
export function refreshTokenGrant(
  ctx: AppContext,
  key: SigningKey,
  refreshToken: string,
  now: Date,
): Promise<GrantOutcome> {
  const hash = hashRefreshToken(refreshToken);
  const maxAgeMs = ctx.config.identity.refreshFamilyMaxDays * 86_400_000;
  return ctx.db.transaction().execute(async (trx): Promise<GrantOutcome> => {
    const found = await refreshTokenOwner(trx, hash);
    if (!found) return { kind: 'refused' };
    const user = await lockUserForShare(trx, found.user_id);
    if (!user) return { kind: 'refused' };
    const family = await familyOfRefreshToken(trx, hash);
    if (!family || family.revoked_at !== null || now.getTime() >= family.started_at.getTime() + maxAgeMs)
      return { kind: 'refused' };
    const claimed = await claimRefreshToken(trx, hash, now);
    if (claimed)
      return {
        kind: 'issued',
        tokens: await issueTokens(trx, key, ctx.config.baseUrl, user, now, claimed.family_id),
      };
    // Reuse of a rotated token means it leaked: revoke its whole family (committed with this transaction).
    const seen = await refreshTokenUse(trx, hash);
    if (!seen?.used_at) return { kind: 'refused' };
    await revokeFamily(trx, seen.family_id, now);
    return { kind: 'reused' };
  });
}
