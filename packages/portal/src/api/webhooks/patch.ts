import { UpdateWebhookBody, WebhookIdQuery, WebhookResponse } from '@svc/protocol';
import { requireUser, userOf } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';
import { presentSubscription } from '../../webhooks/present.ts';
import { changeSubscription } from '../../webhooks/subscriptions.ts';

/** PATCH /api/webhooks?id=: partial update; a new URL is checked again; enabled:true clears the failure count and disabled_reason. */
export default function register(app: App, ctx: AppContext): void {
  app.patch(
    '/webhooks',
    {
      onRequest: requireUser(ctx, { permission: 'webhooks' }),
      schema: {
        operationId: 'updateWebhook',
        tags: ['webhooks'],
        summary: 'Update a webhook subscription',
        security: [{ identityToken: [] }],
        querystring: WebhookIdQuery,
        body: UpdateWebhookBody,
        description:
          'A new URL is checked as at creation. 409 when a new URL or client_id would give the client a second subscription with the same URL, or a moved subscription would exceed SVC_WEBHOOK_MAX_PER_CLIENT at its new client.',
        response: responses({ 200: WebhookResponse }, 400, 401, 403, 404, 409),
      },
    },
    async (request) => {
      const row = await changeSubscription(ctx, userOf(request), request.query.id, request.body);
      return { subscription: presentSubscription(row) };
    },
  );
}
