import { DeliveriesQuery, DeliveriesResponse } from '@svc/protocol';
import { requireUser, userOf } from '../../../auth/guards.ts';
import type { App, AppContext } from '../../../context.ts';
import { responses } from '../../../http/responses.ts';
import { listDeliveries } from '../../../webhooks/deliveries.ts';
import { presentForCaller } from '../../../webhooks/present.ts';

/** GET /api/webhooks/deliveries?id=<subscription>: the delivery log, newest first, with every attempt. */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/webhooks/deliveries',
    {
      onRequest: requireUser(ctx, { permission: 'webhooks' }),
      schema: {
        operationId: 'listWebhookDeliveries',
        tags: ['webhooks'],
        summary: 'Delivery log of a subscription',
        description: [
          'Newest first. A delivery is logged as `pending` before its first attempt and finished as `succeeded` or `failed` with its attempts',
          "(one, or two when the first failed: a retry after 500 ms), each with status code, duration and a short error; never the receiver's answer body.",
          'A delivery whose replica stopped before recording its outcome is taken over by another replica once its lease (SVC_WEBHOOK_LEASE_SECONDS) expires',
          'and sent again with the same webhook-id and body (`runs` counts the runs); after SVC_WEBHOOK_MAX_RUNS runs without an outcome, or when its',
          'subscription was disabled or moved to another client meanwhile, it ends `abandoned`, the reason logged as its last attempt (`abandoned: …`).',
          'A receiver origin has at most SVC_WEBHOOK_MAX_IN_FLIGHT (default 64) deliveries in flight, halved by each timeout (down to 1), raised by one with each answer;',
          'attempts past it wait their turn in order. One that finds SVC_WEBHOOK_QUEUE_MAX (default 1000) waiting, or waits longer than SVC_WEBHOOK_QUEUE_WAIT_SECONDS (default 20),',
          'fails with `not sent: …` without being sent.',
          'After SVC_WEBHOOK_DISABLE_AFTER (default 20) failed deliveries in a row the subscription is disabled and `webhook_disabled` is audited;',
          'a delivery none of whose attempts was sent does not count.',
          'A delivery keeps the client of its event: a scoped caller sees only deliveries of clients in its scope now, so after an admin moves a subscription',
          "to another client, the new client does not see the old one's deliveries.",
          'Non-admins see coarse attempt errors only: `HTTP <status>`, `timeout`, `TLS error`, `not sent` or `connection failed` (and `abandoned: …` as is).',
        ].join(' '),
        security: [{ identityToken: [] }],
        querystring: DeliveriesQuery,
        response: responses({ 200: DeliveriesResponse }, 400, 401, 403, 404),
      },
    },
    async (request) => {
      const user = userOf(request);
      const deliveries = await listDeliveries(ctx.db, user, request.query.id, request.query.limit ?? 50);
      return { deliveries: deliveries.map((d) => presentForCaller(user, d)) };
    },
  );
}
