import { setTimeout } from 'node:timers/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { OAuthError, TokenRequest, TokenResponse } from '@svc/protocol';
import type { App, AppContext } from '../../context.ts';
import { HttpError } from '../../http/errors.ts';
import { storable } from '../../sessions/derive.ts';
import { verifyPassword } from '../passwords.ts';
import { admitLoginAttempt, recordSuccessfulLogin } from '../throttle.ts';
import { hashRefreshToken, issueTokens, revokeFamily } from '../tokens.ts';
import { findUserByEmail } from '../users.ts';

/** RFC 6749 section 5.2 errors keep D1's `error` field and add `error_description`. */
function oauthError(status: number, error: string, description: string, headers?: Record<string, string>): HttpError {
  return new HttpError(status, error, { extra: { error_description: description }, headers });
}

/** `Sec-Fetch-Site: cross-site`, or an Origin that is not the portal's own (SVC_BASE_URL). */
function crossSite(headers: IncomingHttpHeaders, baseUrl: string): boolean {
  if (headers['sec-fetch-site'] === 'cross-site') return true;
  const origin = headers.origin;
  return origin !== undefined && origin !== new URL(baseUrl).origin;
}

/** POST /identity/token: password and refresh-token grants (D4). */
export default function register(app: App, ctx: AppContext): void {
  app.post(
    '/token',
    {
      config: { rateLimit: { max: 30, timeWindow: 60_000 } },
      // A malformed request is an OAuth invalid_request (RFC 6749 section 5.2), not the
      // generic validation error body, so OAuth clients can read it.
      attachValidation: true,
      schema: {
        operationId: 'issueToken',
        security: [],
        tags: ['identity'],
        summary: 'Exchange a password or a refresh token for an access token',
        consumes: ['application/x-www-form-urlencoded', 'application/json'],
        body: TokenRequest,
        response: { 200: TokenResponse, 400: OAuthError, 403: OAuthError, 429: OAuthError },
      },
    },
    async (request, reply) => {
      // A browser form on another site must not be able to spend visitors' requests on
      // failed logins (lockout) or on anything else here. Clients without Origin still work.
      if (crossSite(request.headers, ctx.config.baseUrl))
        throw oauthError(403, 'invalid_request', 'cross-site request refused');
      const key = ctx.signingKey;
      if (key === null) throw new Error('identity provider disabled');
      const now = ctx.now();
      void reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      if (request.validationError)
        throw oauthError(400, 'invalid_request', `Malformed token request: ${request.validationError.message}`);
      const body = request.body;

      if (body.grant_type === 'password') {
        if (!body.username || !body.password)
          throw oauthError(400, 'invalid_request', 'username and password are required');
        // No account has such an e-mail, and PostgreSQL could not even look one up.
        if (!storable(body.username)) throw oauthError(400, 'invalid_grant', 'Invalid username or password');
        // Counted before the password check (see admitLoginAttempt), so parallel guesses
        // cannot outrun the lock; and for every e-mail, so a lock reveals no account.
        const gate = await admitLoginAttempt(
          ctx.db,
          body.username,
          request.ip,
          now,
          ctx.config.identity.loginSlowAfter,
        );
        if (!gate.admitted)
          throw oauthError(429, 'too_many_attempts', 'Too many failed logins; try again later', {
            'retry-after': String(gate.retryAfter),
          });
        // Many failures across addresses: slow every attempt down, the right one too, but never refuse it.
        if (gate.slow) await setTimeout(ctx.config.identity.loginSlowDelayMs);
        const user = await findUserByEmail(ctx.db, body.username);
        const ok = await verifyPassword(user?.password_hash ?? null, body.password);
        if (!user || !ok) throw oauthError(400, 'invalid_grant', 'Invalid username or password');
        await recordSuccessfulLogin(ctx.db, body.username, request.ip);
        return issueTokens(ctx.db, key, ctx.config.baseUrl, user, now);
      }

      if (body.grant_type === 'refresh_token') {
        if (!body.refresh_token) throw oauthError(400, 'invalid_request', 'refresh_token is required');
        const hash = hashRefreshToken(body.refresh_token);
        const refused = () => oauthError(400, 'invalid_grant', 'Invalid or expired refresh token');
        // One transaction from claim to the new token's insert. The claimed row stays locked
        // until the new token exists, so a concurrent replay of the same token waits and then
        // revokes the family *including* the new token; and the user's row is share-locked
        // first, so a password change or deletion (which lock it for update) either happens
        // before (the claim then finds the token revoked) or after (and revokes the new token).
        const outcome = await ctx.db.transaction().execute(async (trx) => {
          const found = await trx
            .selectFrom('refresh_tokens')
            .select('user_id')
            .where('token_hash', '=', hash)
            .executeTakeFirst();
          if (!found) return { kind: 'refused' as const };
          const user = await trx
            .selectFrom('users')
            .selectAll()
            .where('id', '=', found.user_id)
            .forShare()
            .executeTakeFirst();
          if (!user) return { kind: 'refused' as const };
          // The family's absolute lifetime counts from the login, however often it rotated.
          const family = await trx
            .selectFrom('refresh_tokens')
            .innerJoin('token_families', 'token_families.id', 'refresh_tokens.family_id')
            .select(['token_families.started_at', 'token_families.revoked_at'])
            .where('token_hash', '=', hash)
            .executeTakeFirst();
          if (
            !family ||
            family.revoked_at !== null ||
            now.getTime() >= family.started_at.getTime() + ctx.config.identity.refreshFamilyMaxDays * 86_400_000
          )
            return { kind: 'refused' as const };
          // Rotation: a refresh token is good exactly once.
          const claimed = await trx
            .updateTable('refresh_tokens')
            .set({ used_at: now })
            .where('token_hash', '=', hash)
            .where('used_at', 'is', null)
            .where('revoked_at', 'is', null)
            .where('expires_at', '>', now)
            .returning('family_id')
            .executeTakeFirst();
          if (claimed)
            return {
              kind: 'issued' as const,
              tokens: await issueTokens(trx, key, ctx.config.baseUrl, user, now, claimed.family_id),
            };
          // Reuse of a rotated token means it leaked: revoke its whole family (committed
          // with this transaction; the refusal is thrown only after it).
          const seen = await trx
            .selectFrom('refresh_tokens')
            .select(['family_id', 'used_at'])
            .where('token_hash', '=', hash)
            .executeTakeFirst();
          if (!seen?.used_at) return { kind: 'refused' as const };
          await revokeFamily(trx, seen.family_id, now);
          return { kind: 'reused' as const };
        });
        if (outcome.kind === 'issued') return outcome.tokens;
        if (outcome.kind === 'reused') request.log.warn('refresh token reused; token family revoked');
        throw refused();
      }

      throw oauthError(
        400,
        body.grant_type ? 'unsupported_grant_type' : 'invalid_request',
        'grant_type must be password or refresh_token',
      );
    },
  );
}
