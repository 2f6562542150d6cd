import { createHash, randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import type { Kysely } from 'kysely';
import type { TokenResponse } from '@svc/protocol';
import type { Database } from '../db/schema.ts';
import { findFamily, insertRefreshToken, insertTokenFamily } from './queries.ts';
import { SIGNING_ALG, type SigningKey } from './signing-keys.ts';
import type { UserRow } from './users.ts';

export const TOKEN_AUDIENCE = 'svc-portal';
export const ACCESS_TOKEN_SECONDS = 3600;
export const REFRESH_TOKEN_DAYS = 30;

export function identityIssuer(baseUrl: string): string {
  return `${baseUrl}/identity`;
}

export function hashRefreshToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * A 1 h EdDSA access token and a new opaque refresh token (stored hashed) in `familyId`'s
 * rotation chain; without `familyId` (a password login) a new family starts. The access
 * token carries the family id as `sid`, so revoking the family ends it (accessTokenInForce).
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
    await insertTokenFamily(db, sid, user.id, now);
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
  await insertRefreshToken(db, {
    hash: hashRefreshToken(refresh),
    userId: user.id,
    familyId: sid,
    expiresAt: new Date(now.getTime() + REFRESH_TOKEN_DAYS * 86_400_000),
  });
  return { access_token: access, token_type: 'Bearer', expires_in: ACCESS_TOKEN_SECONDS, refresh_token: refresh };
}

/**
 * Whether a verified access token of the portal's own provider is still in force: its
 * family (`sid`) exists for that user and is not revoked. One indexed lookup per request,
 * no cache, so a revocation takes effect on the next request.
 */
export async function accessTokenInForce(db: Kysely<Database>, sub: string, sid: string): Promise<boolean> {
  const family = await findFamily(db, sid, sub);
  return family !== undefined && family.revoked_at === null;
}
