import { DeliveriesQuery, DeliveriesResponse } from '@svc/protocol';
import { requireUser, userOf } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';
import { subscriptionFor } from '../../webhooks/access.ts';
import { presentDelivery } from '../../webhooks/present.ts';

/** GET /api/webhooks/deliveries?id=<subscription>: the delivery log, newest first, with every attempt. */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/webhooks/deliveries',
    {
      onRequest: requireUser(ctx, { permission: 'webhooks' }),
      schema: { tags: ['webhooks'], summary: 'Delivery log of a subscription', security: [{ identityToken: [] }], querystring: DeliveriesQuery, response: responses({ 200: DeliveriesResponse }, 400, 401, 403, 404) },
    },
    async (request) => {
      const sub = await subscriptionFor(ctx, userOf(request), request.query.id);
      const rows = await ctx.db.selectFrom('webhook_deliveries').selectAll().where('subscription_id', '=', sub.id).orderBy('id', 'desc').limit(request.query.limit ?? 50).execute();
      return { deliveries: rows.map(presentDelivery) };
    },
  );
}
