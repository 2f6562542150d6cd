import { OAuthError, OkBody, RevokeRequest } from '@svc/protocol';
import type { App, AppContext } from '../../../context.ts';
import { revokeToken } from '../../revocation.ts';
import { oauthError, refuseCrossSite } from '../../../http/oauth.ts';

/**
 * POST /identity/revoke (RFC 7009): sign-out. Ends the family of a refresh token or of an
 * access token's `sid`; 200 for any token, known or not (section 2.2), so the answer says
 * nothing about it. The console calls it before it forgets its tokens.
 */
export default function register(app: App, ctx: AppContext): void {
  app.post(
    '/revoke',
    {
      config: { rateLimit: { max: 60, timeWindow: 60_000 } },
      attachValidation: true,
      schema: {
        operationId: 'revokeToken',
        security: [],
        tags: ['identity'],
        summary: 'Sign out: revoke a refresh or access token and its whole session',
        consumes: ['application/x-www-form-urlencoded', 'application/json'],
        body: RevokeRequest,
        response: { 200: OkBody, 400: OAuthError, 403: OAuthError, 429: OAuthError },
      },
    },
    async (request, reply) => {
      refuseCrossSite(request.headers, ctx.config.baseUrl);
      void reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      if (request.validationError)
        throw oauthError(400, 'invalid_request', `Malformed revocation request: ${request.validationError.message}`);
      const { token, token_type_hint: hint } = request.body;
      if (!token) throw oauthError(400, 'invalid_request', 'token is required');
      await revokeToken(ctx, token, hint);
      return { ok: true as const };
    },
  );
}
