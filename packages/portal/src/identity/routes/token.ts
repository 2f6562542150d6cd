import { OAuthError, TokenRequest, TokenResponse } from '@svc/protocol';
import type { App, AppContext } from '../../context.ts';
import { HttpError } from '../../errors.ts';
import { verifyPassword } from '../passwords.ts';
import { lockedFor, recordFailedLogin, recordSuccessfulLogin } from '../throttle.ts';
import { hashRefreshToken, issueTokens } from '../tokens.ts';
import { findUserByEmail, findUserById } from '../users.ts';

/** RFC 6749 section 5.2 errors keep D1's `error` field and add `error_description`. */
function oauthError(status: number, error: string, description: string, headers?: Record<string, string>): HttpError {
  return new HttpError(status, error, { extra: { error_description: description }, headers });
}

/** POST /identity/token: password and refresh-token grants (D4). */
export default function register(app: App, ctx: AppContext): void {
  app.post(
    '/token',
    {
      config: { rateLimit: { max: 30, timeWindow: 60_000 } },
      schema: {
        tags: ['identity'],
        summary: 'Exchange a password or a refresh token for an access token',
        consumes: ['application/x-www-form-urlencoded', 'application/json'],
        body: TokenRequest,
        response: { 200: TokenResponse, 400: OAuthError, 429: OAuthError },
      },
    },
    async (request, reply) => {
      const key = ctx.signingKey;
      if (key === null) throw new Error('identity provider disabled');
      const body = request.body;
      const now = ctx.now();
      void reply.header('cache-control', 'no-store').header('pragma', 'no-cache');

      if (body.grant_type === 'password') {
        if (!body.username || !body.password) throw oauthError(400, 'invalid_request', 'username and password are required');
        const user = await findUserByEmail(ctx.db, body.username);
        const wait = user ? lockedFor(user, now) : 0;
        if (wait > 0) throw oauthError(429, 'too_many_attempts', 'Too many failed logins; try again later', { 'retry-after': String(wait) });
        const ok = await verifyPassword(user?.password_hash ?? null, body.password);
        if (!user || !ok) {
          if (user) await recordFailedLogin(ctx.db, user.id, now);
          throw oauthError(400, 'invalid_grant', 'Invalid username or password');
        }
        await recordSuccessfulLogin(ctx.db, user);
        return issueTokens(ctx.db, key, ctx.config.baseUrl, user, now);
      }

      if (body.grant_type === 'refresh_token') {
        if (!body.refresh_token) throw oauthError(400, 'invalid_request', 'refresh_token is required');
        const hash = hashRefreshToken(body.refresh_token);
        // Rotation: a refresh token is good exactly once.
        const claimed = await ctx.db
          .updateTable('refresh_tokens')
          .set({ used_at: now })
          .where('token_hash', '=', hash)
          .where('used_at', 'is', null)
          .where('revoked_at', 'is', null)
          .where('expires_at', '>', now)
          .returning(['user_id', 'family_id'])
          .executeTakeFirst();
        if (!claimed) {
          // Reuse of a rotated token means it leaked: revoke its whole family.
          const seen = await ctx.db.selectFrom('refresh_tokens').select(['family_id', 'used_at']).where('token_hash', '=', hash).executeTakeFirst();
          if (seen?.used_at) {
            await ctx.db.updateTable('refresh_tokens').set({ revoked_at: now }).where('family_id', '=', seen.family_id).where('revoked_at', 'is', null).execute();
            request.log.warn('refresh token reused; token family revoked');
          }
          throw oauthError(400, 'invalid_grant', 'Invalid or expired refresh token');
        }
        const user = await findUserById(ctx.db, claimed.user_id);
        if (!user) throw oauthError(400, 'invalid_grant', 'Invalid or expired refresh token');
        return issueTokens(ctx.db, key, ctx.config.baseUrl, user, now, claimed.family_id);
      }

      throw oauthError(400, body.grant_type ? 'unsupported_grant_type' : 'invalid_request', 'grant_type must be password or refresh_token');
    },
  );
}
