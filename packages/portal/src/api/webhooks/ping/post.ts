import { DeliveryResponse, WebhookIdQuery } from '@svc/protocol';
import { requireUser, userOf } from '../../../auth/guards.ts';
import type { App, AppContext } from '../../../context.ts';
import { responses } from '../../../http/responses.ts';
import { pingSubscription } from '../../../webhooks/deliveries.ts';
import { presentForCaller } from '../../../webhooks/present.ts';

/** POST /api/webhooks/ping?id=: a signed `ping` test delivery now; answers its logged outcome (coarse errors for non-admins). */
export default function register(app: App, ctx: AppContext): void {
  app.post(
    '/webhooks/ping',
    {
      onRequest: requireUser(ctx, { permission: 'webhooks' }),
      schema: {
        operationId: 'pingWebhook',
        tags: ['webhooks'],
        summary: 'Send a test delivery',
        security: [{ identityToken: [] }],
        querystring: WebhookIdQuery,
        response: responses({ 200: DeliveryResponse }, 400, 401, 403, 404),
      },
    },
    async (request) => {
      const user = userOf(request);
      const delivery = await pingSubscription(ctx, user, request.query.id);
      return { delivery: presentForCaller(user, delivery) };
    },
  );
}
