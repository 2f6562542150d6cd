import { createHash, randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import type { Kysely } from 'kysely';
import type { TokenResponse } from '@svc/protocol';
import { identityIssuer, TOKEN_AUDIENCE } from '../auth/jwt.ts';
import type { Database } from '../db/schema.ts';
import { SIGNING_ALG, type SigningKey } from './signing-keys.ts';
import type { UserRow } from './users.ts';

export const ACCESS_TOKEN_SECONDS = 3600;
export const REFRESH_TOKEN_DAYS = 30;

export function hashRefreshToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * A 1 h EdDSA access token and a new opaque refresh token (stored hashed) in `familyId`'s
 * rotation chain; without `familyId` (a password login) a new family starts. The access
 * token carries the family id as `sid`, so revoking the family ends it (auth/jwt.ts).
 */
export async function issueTokens(
  db: Kysely<Database>,
  key: SigningKey,
  baseUrl: string,
  user: UserRow,
  now: Date,
  familyId?: string,
): Promise<TokenResponse> {
  let sid = familyId;
  if (sid === undefined) {
    sid = randomBytes(12).toString('hex');
    await db
      .insertInto('token_families')
      .values({ id: sid, user_id: user.id, started_at: now, revoked_at: null })
      .execute();
  }
  const iat = Math.floor(now.getTime() / 1000);
  const access = await new SignJWT({ email: user.email, role: user.role, client_ids: user.client_ids, sid })
    .setProtectedHeader({ alg: SIGNING_ALG, kid: key.kid, typ: 'JWT' })
    .setSubject(user.id)
    .setIssuer(identityIssuer(baseUrl))
    .setAudience(TOKEN_AUDIENCE)
    .setIssuedAt(iat)
    .setExpirationTime(iat + ACCESS_TOKEN_SECONDS)
    .setJti(randomBytes(12).toString('hex'))
    .sign(key.privateKey);
  const refresh = randomBytes(32).toString('base64url');
  await db
    .insertInto('refresh_tokens')
    .values({
      token_hash: hashRefreshToken(refresh),
      user_id: user.id,
      family_id: sid,
      expires_at: new Date(now.getTime() + REFRESH_TOKEN_DAYS * 86_400_000),
      used_at: null,
      revoked_at: null,
    })
    .execute();
  return { access_token: access, token_type: 'Bearer', expires_in: ACCESS_TOKEN_SECONDS, refresh_token: refresh };
}

/** Revoke a family: its refresh tokens stop refreshing and its access tokens stop verifying. */
export async function revokeFamily(db: Kysely<Database>, familyId: string, now: Date): Promise<void> {
  await db
    .updateTable('token_families')
    .set({ revoked_at: now })
    .where('id', '=', familyId)
    .where('revoked_at', 'is', null)
    .execute();
  await db
    .updateTable('refresh_tokens')
    .set({ revoked_at: now })
    .where('family_id', '=', familyId)
    .where('revoked_at', 'is', null)
    .execute();
}

/** A new password: every family of the user ends, and so does every access token issued before it. */
export async function revokeUserTokens(db: Kysely<Database>, userId: string, now: Date): Promise<void> {
  await db.updateTable('users').set({ tokens_valid_after: now }).where('id', '=', userId).execute();
  await db
    .updateTable('token_families')
    .set({ revoked_at: now })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .execute();
  await db
    .updateTable('refresh_tokens')
    .set({ revoked_at: now })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .execute();
}

/**
 * Whether a verified access token of the portal's own provider is still in force: its
 * family (`sid`) not revoked, or for a token without `sid` (issued before families existed)
 * issued after the user's last password change. One indexed lookup per request, no cache,
 * so a revocation takes effect on the next request. False when the user no longer exists.
 */
export async function accessTokenInForce(
  db: Kysely<Database>,
  sub: string,
  sid: unknown,
  iat: number | undefined,
): Promise<boolean> {
  if (typeof sid === 'string') {
    const family = await db
      .selectFrom('token_families')
      .select('revoked_at')
      .where('id', '=', sid)
      .where('user_id', '=', sub)
      .executeTakeFirst();
    return family !== undefined && family.revoked_at === null;
  }
  const user = await db.selectFrom('users').select('tokens_valid_after').where('id', '=', sub).executeTakeFirst();
  if (!user) return false;
  return user.tokens_valid_after === null || (iat !== undefined && iat * 1000 > user.tokens_valid_after.getTime());
}
