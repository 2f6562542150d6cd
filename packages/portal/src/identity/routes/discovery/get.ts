import { Type } from '@sinclair/typebox';
import type { App, AppContext } from '../../../context.ts';
import { responses } from '../../../http/responses.ts';
import { presentDiscovery } from '../../present.ts';

const Discovery = Type.Object({
  issuer: Type.String(),
  jwks_uri: Type.String(),
  token_endpoint: Type.String(),
  revocation_endpoint: Type.String(),
  revocation_endpoint_auth_methods_supported: Type.Array(Type.String()),
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
    async () => presentDiscovery(ctx.config.baseUrl),
  );
}
