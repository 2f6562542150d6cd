import { createLocalJWKSet, createRemoteJWKSet, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { Kysely } from 'kysely';
import type { Config } from '../config/index.ts';
import type { Database } from '../db/schema.ts';
import { publicJwks, SIGNING_ALG } from '../identity/signing-keys.ts';
import { ACCESS_TOKEN_SECONDS, accessTokenInForce, identityIssuer, TOKEN_AUDIENCE } from '../identity/tokens.ts';

export interface TokenVerifier {
  /** `local`: tokens of the portal's own identity provider; `external`: an OpenID provider's. */
  readonly mode: 'local' | 'external';
  /** The verified claims, or null for any invalid, expired, foreign or malformed token. */
  verify(token: string): Promise<JWTPayload | null>;
}

/** How far ahead of the portal's clock an `iat` may be (clocks of replicas and providers differ a little). */
export const IAT_SKEW_SECONDS = 60;

/** An `iat` later than now plus the skew: no issuer of ours or anyone's could have issued it yet. */
function issuedInFuture(payload: JWTPayload, now: Date): boolean {
  return typeof payload.iat === 'number' && payload.iat > now.getTime() / 1000 + IAT_SKEW_SECONDS;
}

/**
 * Pinned algorithm, issuer and audience; `exp` and `sub` are required, and an `iat` in the
 * future is refused. The portal's own tokens must also carry `iat` and `sid` (their family,
 * which revocation ends) and live no longer than ACCESS_TOKEN_SECONDS (`exp - iat`): a token
 * signed with the portal's key but not issued by issueTokens is refused. An external
 * provider's tokens carry no `sid` of ours and their lifetime is the provider's choice, so
 * neither is required of them
 * (docs/decisions.md#claims-the-portals-own-access-tokens-must-carry). `now` is the
 * portal's clock (AppContext.now): tokens are issued with it, so they are checked against
 * it too, not against jose's default of the wall clock.
 */
export function createTokenVerifier(
  config: Config,
  db: Kysely<Database>,
  now: () => Date = () => new Date(),
): TokenVerifier {
  if (config.externalJwt) {
    const ext = config.externalJwt;
    const jwks = createRemoteJWKSet(new URL(ext.jwksUrl), { timeoutDuration: 5_000, cooldownDuration: 30_000 });
    return {
      mode: 'external',
      async verify(token) {
        try {
          const { payload } = await jwtVerify(token, jwks, {
            algorithms: ext.algorithms,
            issuer: ext.issuer,
            audience: ext.audience,
            requiredClaims: ['exp', 'sub'],
            currentDate: now(),
          });
          return issuedInFuture(payload, now()) ? null : payload;
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
    jwtVerify(token, ks, {
      algorithms: [SIGNING_ALG],
      issuer,
      audience: TOKEN_AUDIENCE,
      requiredClaims: ['exp', 'sub', 'iat', 'sid'],
      currentDate: now(),
    });
  const wellFormed = (p: JWTPayload) =>
    typeof p['sid'] === 'string' &&
    typeof p.iat === 'number' &&
    typeof p.exp === 'number' &&
    p.exp - p.iat <= ACCESS_TOKEN_SECONDS &&
    !issuedInFuture(p, now());
  return {
    mode: 'local',
    async verify(token) {
      // Loading the keys is outside the try: a database outage must surface as a 503,
      // not as a 401 that tells the client to log in again.
      const keys = keySet ?? (await load());
      let payload: JWTPayload;
      try {
        payload = (await attempt(keys, token)).payload;
      } catch (err) {
        if ((err as { code?: string }).code !== 'ERR_JWKS_NO_MATCHING_KEY' || Date.now() - loadedAt <= 10_000)
          return null;
        const reloaded = await load();
        try {
          payload = (await attempt(reloaded, token)).payload;
        } catch {
          return null;
        }
      }
      if (!wellFormed(payload)) return null;
      // A revoked family (sign-out, a password change, a reused refresh token) ends the token
      // before its exp (also outside the try: an outage is a 503, not a 401).
      return (await accessTokenInForce(db, payload.sub as string, payload['sid'] as string)) ? payload : null;
    },
  };
}
