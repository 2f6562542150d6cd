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

/** A 1 h EdDSA access token and a new opaque refresh token (stored hashed) in `familyId`'s rotation chain. */
export async function issueTokens(
  db: Kysely<Database>,
  key: SigningKey,
  baseUrl: string,
  user: UserRow,
  now: Date,
  familyId: string = randomBytes(12).toString('hex'),
): Promise<TokenResponse> {
  const iat = Math.floor(now.getTime() / 1000);
  const access = await new SignJWT({ email: user.email, role: user.role, client_ids: user.client_ids })
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
      family_id: familyId,
      expires_at: new Date(now.getTime() + REFRESH_TOKEN_DAYS * 86_400_000),
      used_at: null,
      revoked_at: null,
    })
    .execute();
  return { access_token: access, token_type: 'Bearer', expires_in: ACCESS_TOKEN_SECONDS, refresh_token: refresh };
}
