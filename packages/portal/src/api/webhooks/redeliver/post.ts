import { DeliveryResponse, RedeliverBody } from '@svc/protocol';
import { requireUser, userOf } from '../../../auth/guards.ts';
import type { App, AppContext } from '../../../context.ts';
import { responses } from '../../../http/responses.ts';
import { redeliver } from '../../../webhooks/deliveries.ts';
import { presentForCaller } from '../../../webhooks/present.ts';

/**
 * POST /api/webhooks/redeliver `{delivery_id}`: send a logged delivery again (same body and
 * event id) and answer its outcome. Only a delivery the caller may see now (deliveryFor).
 */
export default function register(app: App, ctx: AppContext): void {
  app.post(
    '/webhooks/redeliver',
    {
      onRequest: requireUser(ctx, { permission: 'webhooks' }),
      schema: {
        operationId: 'redeliverWebhookDelivery',
        tags: ['webhooks'],
        summary: 'Redeliver a logged delivery',
        description: [
          "Sends the same body and event id again, to the subscription's URL of today; logged as a redelivery of the original.",
          'A delivery keeps the client of its event: a caller sees and redelivers only deliveries of clients in its scope now (admins: all);',
          "any other is 404, like a missing one. 409 when the subscription has since been moved to another client than the event's.",
          'Non-admins see coarse attempt errors only.',
        ].join(' '),
        security: [{ identityToken: [] }],
        body: RedeliverBody,
        response: responses({ 200: DeliveryResponse }, 400, 401, 403, 404, 409),
      },
    },
    async (request) => {
      const user = userOf(request);
      const delivery = await redeliver(ctx, user, request.body.delivery_id);
      return { delivery: presentForCaller(user, delivery) };
    },
  );
}
