import { DeliveriesQuery, DeliveriesResponse } from '@svc/protocol';
import { requireUser, userOf } from '../../auth/guards.ts';
import { scopeOf } from '../../auth/principal.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';
import { subscriptionFor } from '../../webhooks/access.ts';
import { presentDelivery, presentForCaller } from '../../webhooks/present.ts';

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
          'A receiver origin has at most SVC_WEBHOOK_MAX_IN_FLIGHT (default 64) deliveries in flight, halved by each timeout (down to 1), raised by one with each answer;',
          'attempts past it wait their turn in order. One that finds SVC_WEBHOOK_QUEUE_MAX (default 1000) waiting, or waits longer than SVC_WEBHOOK_QUEUE_WAIT_SECONDS (default 20),',
          'fails with `not sent: …` without being sent.',
          'After SVC_WEBHOOK_DISABLE_AFTER (default 20) failed deliveries in a row the subscription is disabled and `webhook_disabled` is audited;',
          'a delivery none of whose attempts was sent does not count.',
          'A delivery keeps the client of its event: a scoped caller sees only deliveries of clients in its scope now, so after an admin moves a subscription',
          "to another client, the new client does not see the old one's deliveries.",
          'Non-admins see coarse attempt errors only: `HTTP <status>`, `timeout`, `TLS error`, `not sent` or `connection failed`.',
        ].join(' '),
        security: [{ identityToken: [] }],
        querystring: DeliveriesQuery,
        response: responses({ 200: DeliveriesResponse }, 400, 401, 403, 404),
      },
    },
    async (request) => {
      const user = userOf(request);
      const sub = await subscriptionFor(ctx, user, request.query.id);
      let q = ctx.db.selectFrom('webhook_deliveries').selectAll().where('subscription_id', '=', sub.id);
      // Scoped: only deliveries of events of its clients (it has some: subscriptionFor let it through).
      const scope = user.admin ? null : scopeOf(user);
      if (scope !== null) q = q.where('client_id', 'in', scope);
      const rows = await q
        .orderBy('id', 'desc')
        .limit(request.query.limit ?? 50)
        .execute();
      return { deliveries: rows.map((r) => presentForCaller(user, presentDelivery(r))) };
    },
  );
}
