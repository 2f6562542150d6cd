import { OAuthError, TokenRequest, TokenResponse } from '@svc/protocol';
import type { App, AppContext } from '../../../context.ts';
import { type GrantOutcome, passwordGrant, refreshTokenGrant } from '../../grants.ts';
import { oauthError, refuseCrossSite } from '../../../http/oauth.ts';

/** A grant's outcome as the OAuth answer; `refusal` is the grant's own invalid_grant description. */
function tokensOrRefusal(outcome: GrantOutcome, refusal: string) {
  switch (outcome.kind) {
    case 'issued':
      return outcome.tokens;
    case 'locked':
      throw oauthError(429, 'too_many_attempts', 'Too many failed logins; try again later', {
        'retry-after': String(outcome.retryAfter),
      });
    case 'busy':
      throw oauthError(429, 'too_many_attempts', 'Too many sign-ins for this account at once; try again in a moment', {
        'retry-after': String(outcome.retryAfter),
      });
    case 'refused':
    case 'reused':
      throw oauthError(400, 'invalid_grant', refusal);
  }
}

/** POST /identity/token: password and refresh-token grants (docs/api.md#identity-provider). */
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
      refuseCrossSite(request.headers, ctx.config.baseUrl);
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
        const login = { username: body.username, password: body.password, address: request.ip };
        return tokensOrRefusal(await passwordGrant(ctx, key, login, now), 'Invalid username or password');
      }

      if (body.grant_type === 'refresh_token') {
        if (!body.refresh_token) throw oauthError(400, 'invalid_request', 'refresh_token is required');
        const outcome = await refreshTokenGrant(ctx, key, body.refresh_token, now);
        if (outcome.kind === 'reused') request.log.warn('refresh token reused; token family revoked');
        return tokensOrRefusal(outcome, 'Invalid or expired refresh token');
      }

      throw oauthError(
        400,
        body.grant_type ? 'unsupported_grant_type' : 'invalid_request',
        'grant_type must be password or refresh_token',
      );
    },
  );
}
