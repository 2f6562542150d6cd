import { CreatedWebhookResponse, CreateWebhookBody } from '@svc/protocol';
import { requireUser, userOf } from '../../auth/guards.ts';
import { actorOf } from '../../auth/principal.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';
import { assertClientAllowed, assertSafeUrl } from '../../webhooks/access.ts';
import { newSigningSecret, newSubscriptionId, presentSubscription } from '../../webhooks/present.ts';
import { withinClientLimits } from '../../webhooks/subscription-limits.ts';
import { standardWebhooksSecret } from '../../webhooks/signing.ts';

/**
 * POST /api/webhooks (D12). The signing secret (64 hex) is in this response only, with
 * the same key in the `whsec_` form that Standard Webhooks libraries take. A client has at
 * most SVC_WEBHOOK_MAX_PER_CLIENT subscriptions and no URL twice (409).
 */
export default function register(app: App, ctx: AppContext): void {
  app.post(
    '/webhooks',
    {
      onRequest: requireUser(ctx, { permission: 'webhooks' }),
      schema: {
        operationId: 'createWebhook',
        tags: ['webhooks'],
        summary: 'Create a webhook subscription',
        description: [
          'The URL must be HTTPS and its host must resolve to public addresses only (400; only admins are told which address was refused).',
          '409 when the client already has SVC_WEBHOOK_MAX_PER_CLIENT (default 25) subscriptions (those without client_id, admin only, have no cap),',
          'or already has one with the same URL (compared after normalisation: scheme and host in lower case, default port and fragment dropped;',
          'subscriptions without client_id are compared among themselves).',
        ].join(' '),
        security: [{ identityToken: [] }],
        body: CreateWebhookBody,
        response: responses({ 201: CreatedWebhookResponse }, 400, 401, 403, 409),
      },
    },
    async (request, reply) => {
      const user = userOf(request);
      const body = request.body;
      const clientId = body.client_id ?? null;
      assertClientAllowed(user, clientId);
      const url = await assertSafeUrl(ctx, user, body.url);
      const secret = newSigningSecret();
      const now = ctx.now();
      const slot = { clientId, url, ownId: null, counts: true, max: ctx.config.webhooks.maxPerClient };
      const row = await withinClientLimits(ctx.db, slot, (trx) =>
        trx
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
          .executeTakeFirstOrThrow(),
      );
      return reply.code(201).send({
        subscription: {
          ...presentSubscription(row),
          signing_secret: secret,
          standard_webhooks_secret: standardWebhooksSecret(secret),
        },
      });
    },
  );
}
