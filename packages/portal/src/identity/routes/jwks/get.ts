import { Jwks } from '@svc/protocol';
import type { App, AppContext } from '../../../context.ts';
import { responses } from '../../../http/responses.ts';
import { publicJwks } from '../../signing-keys.ts';

/** GET /identity/.well-known/jwks.json: the public keys that verify the portal's tokens. */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/.well-known/jwks.json',
    {
      schema: {
        operationId: 'getSigningKeys',
        security: [],
        tags: ['identity'],
        summary: 'Public signing keys (JWKS)',
        response: responses({ 200: Jwks }, 400),
      },
    },
    async (_request, reply) => {
      void reply.header('cache-control', 'public, max-age=300');
      return { keys: await publicJwks(ctx.db) };
    },
  );
}
