import { CreatedWebhookResponse, CreateWebhookBody } from '@svc/protocol';
import { requireUser, userOf } from '../../auth/guards.ts';
import { actorOf } from '../../auth/principal.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';
import { assertClientAllowed, assertSafeUrl } from '../../webhooks/access.ts';
import { newSigningSecret, newSubscriptionId, presentSubscription } from '../../webhooks/present.ts';
import { standardWebhooksSecret } from '../../webhooks/signing.ts';

/**
 * POST /api/webhooks (D12). The signing secret (64 hex) is in this response only, with
 * the same key in the `whsec_` form that Standard Webhooks libraries take.
 */
export default function register(app: App, ctx: AppContext): void {
  app.post(
    '/webhooks',
    {
      onRequest: requireUser(ctx, { permission: 'webhooks' }),
      schema: { tags: ['webhooks'], summary: 'Create a webhook subscription', security: [{ identityToken: [] }], body: CreateWebhookBody, response: responses({ 201: CreatedWebhookResponse }, 400, 401, 403) },
    },
    async (request, reply) => {
      const user = userOf(request);
      const body = request.body;
      const clientId = body.client_id ?? null;
      assertClientAllowed(user, clientId);
      const url = await assertSafeUrl(ctx, body.url);
      const secret = newSigningSecret();
      const now = ctx.now();
      const row = await ctx.db
        .insertInto('webhook_subscriptions')
        .values({
          id: newSubscriptionId(),
          url,
          event_types: body.event_types,
          signing_secret: secret,
          enabled: body.enabled ?? true,
          description: body.description ?? null,
          client_id: clientId,
          created_by: actorOf(user),
          created_at: now,
          updated_at: now,
          disabled_reason: null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return reply.code(201).send({ subscription: { ...presentSubscription(row), signing_secret: secret, standard_webhooks_secret: standardWebhooksSecret(secret) } });
    },
  );
}
