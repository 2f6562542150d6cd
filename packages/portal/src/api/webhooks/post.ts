import { CreatedWebhookResponse, CreateWebhookBody } from '@svc/protocol';
import { requireUser, userOf } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';
import { presentCreatedSubscription } from '../../webhooks/present.ts';
import { createSubscription } from '../../webhooks/subscriptions.ts';

/**
 * POST /api/webhooks (docs/api.md#webhooks). The signing secret (64 hex) is in this response only. A client has
 * at most SVC_WEBHOOK_MAX_PER_CLIENT subscriptions and no URL twice (409).
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
      const { row, secret } = await createSubscription(ctx, userOf(request), request.body);
      return reply.code(201).send({ subscription: presentCreatedSubscription(row, secret) });
    },
  );
}
