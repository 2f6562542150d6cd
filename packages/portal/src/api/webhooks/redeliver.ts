import { DeliveryResponse, RedeliverBody } from '@svc/protocol';
import { requireUser, userOf } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { notFound } from '../../errors.ts';
import { responses } from '../../http/responses.ts';
import { subscriptionFor } from '../../webhooks/access.ts';

/** POST /api/webhooks/redeliver `{delivery_id}`: send a logged delivery again (same body and event id) and answer its outcome. */
export default function register(app: App, ctx: AppContext): void {
  app.post(
    '/webhooks/redeliver',
    {
      onRequest: requireUser(ctx, { permission: 'webhooks' }),
      schema: { tags: ['webhooks'], summary: 'Redeliver a logged delivery', security: [{ identityToken: [] }], body: RedeliverBody, response: responses({ 200: DeliveryResponse }, 400, 401, 403, 404) },
    },
    async (request) => {
      // Ids are bigserial: a number past 2^53 cannot name one and must not reach SQL as a float literal.
      if (!Number.isSafeInteger(request.body.delivery_id)) throw notFound('Delivery not found');
      const original = await ctx.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', String(request.body.delivery_id)).executeTakeFirst();
      if (!original) throw notFound('Delivery not found');
      const sub = await subscriptionFor(ctx, userOf(request), original.subscription_id);
      return { delivery: await ctx.webhooks.dispatcher.redeliver(sub, original) };
    },
  );
}
