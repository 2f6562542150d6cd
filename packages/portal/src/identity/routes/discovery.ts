import { Type } from '@sinclair/typebox';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';
import { identityIssuer } from '../../auth/jwt.ts';
import { SIGNING_ALG } from '../signing-keys.ts';

const Discovery = Type.Object({
  issuer: Type.String(),
  jwks_uri: Type.String(),
  token_endpoint: Type.String(),
  userinfo_endpoint: Type.String(),
  grant_types_supported: Type.Array(Type.String()),
  response_types_supported: Type.Array(Type.String()),
  subject_types_supported: Type.Array(Type.String()),
  id_token_signing_alg_values_supported: Type.Array(Type.String()),
  token_endpoint_auth_methods_supported: Type.Array(Type.String()),
});

/** GET /identity/.well-known/openid-configuration: lets stock OpenID tooling find the JWKS. */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/.well-known/openid-configuration',
    {
      schema: {
        operationId: 'getOpenIdConfiguration',
        security: [],
        tags: ['identity'],
        summary: 'Provider metadata',
        response: responses({ 200: Discovery }, 400),
      },
    },
    async () => {
      const issuer = identityIssuer(ctx.config.baseUrl);
      return {
        issuer,
        jwks_uri: `${issuer}/.well-known/jwks.json`,
        token_endpoint: `${issuer}/token`,
        userinfo_endpoint: `${issuer}/user`,
        grant_types_supported: ['password', 'refresh_token'],
        // Required by OpenID discovery; tokens come only from the token endpoint.
        response_types_supported: ['token'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: [SIGNING_ALG],
        token_endpoint_auth_methods_supported: ['none'],
      };
    },
  );
}
