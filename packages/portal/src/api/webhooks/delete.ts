import { OkBody, WebhookIdQuery } from '@svc/protocol';
import { requireUser, userOf } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';
import { subscriptionFor } from '../../webhooks/access.ts';

/** DELETE /api/webhooks?id=: the subscription and its delivery log. */
export default function register(app: App, ctx: AppContext): void {
  app.delete(
    '/webhooks',
    {
      onRequest: requireUser(ctx, { permission: 'webhooks' }),
      schema: {
        operationId: 'deleteWebhook',
        tags: ['webhooks'],
        summary: 'Delete a webhook subscription',
        security: [{ identityToken: [] }],
        querystring: WebhookIdQuery,
        response: responses({ 200: OkBody }, 400, 401, 403, 404),
      },
    },
    async (request) => {
      const sub = await subscriptionFor(ctx, userOf(request), request.query.id);
      await ctx.db.deleteFrom('webhook_subscriptions').where('id', '=', sub.id).execute();
      return { ok: true as const };
    },
  );
}
