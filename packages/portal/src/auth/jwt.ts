import { createLocalJWKSet, createRemoteJWKSet, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { Kysely } from 'kysely';
import type { Config } from '../config/index.ts';
import type { Database } from '../db/schema.ts';
import { publicJwks, SIGNING_ALG } from '../identity/signing-keys.ts';

export const TOKEN_AUDIENCE = 'svc-portal';

export interface TokenVerifier {
  /** `local`: tokens of the portal's own identity provider; `external`: an OpenID provider's. */
  readonly mode: 'local' | 'external';
  /** The verified claims, or null for any invalid, expired, foreign or malformed token. */
  verify(token: string): Promise<JWTPayload | null>;
}

export function identityIssuer(baseUrl: string): string {
  return `${baseUrl}/identity`;
}

/** Pinned algorithm, issuer and audience; `exp` and `sub` are required. */
export function createTokenVerifier(config: Config, db: Kysely<Database>): TokenVerifier {
  if (config.externalJwt) {
    const ext = config.externalJwt;
    const jwks = createRemoteJWKSet(new URL(ext.jwksUrl), { timeoutDuration: 5_000, cooldownDuration: 30_000 });
    return {
      mode: 'external',
      async verify(token) {
        try {
          const { payload } = await jwtVerify(token, jwks, { algorithms: ext.algorithms, issuer: ext.issuer, audience: ext.audience, requiredClaims: ['exp', 'sub'] });
          return payload;
        } catch {
          return null;
        }
      },
    };
  }

  // Local keys change only when a key is added; reload on an unknown kid, at most every 10 s.
  let keySet: JWTVerifyGetKey | null = null;
  let loadedAt = 0;
  const load = async () => {
    keySet = createLocalJWKSet({ keys: await publicJwks(db) });
    loadedAt = Date.now();
    return keySet;
  };
  const issuer = identityIssuer(config.baseUrl);
  const attempt = (ks: JWTVerifyGetKey, token: string) =>
    jwtVerify(token, ks, { algorithms: [SIGNING_ALG], issuer, audience: TOKEN_AUDIENCE, requiredClaims: ['exp', 'sub'] });
  return {
    mode: 'local',
    async verify(token) {
      try {
        return (await attempt(keySet ?? (await load()), token)).payload;
      } catch (err) {
        if ((err as { code?: string }).code === 'ERR_JWKS_NO_MATCHING_KEY' && Date.now() - loadedAt > 10_000) {
          try {
            return (await attempt(await load(), token)).payload;
          } catch {
            return null;
          }
        }
        return null;
      }
    },
  };
}
