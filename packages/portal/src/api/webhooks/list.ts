import { WebhookListResponse } from '@svc/protocol';
import { requireUser, userOf } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';
import { presentSubscription } from '../../webhooks/present.ts';

/** GET /api/webhooks: the subscriptions the caller may manage, never their secrets. */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/webhooks',
    {
      onRequest: requireUser(ctx, { permission: 'webhooks' }),
      schema: {
        operationId: 'listWebhooks',
        tags: ['webhooks'],
        summary: 'List webhook subscriptions',
        security: [{ identityToken: [] }],
        response: responses({ 200: WebhookListResponse }, 401, 403),
      },
    },
    async (request) => {
      const user = userOf(request);
      let q = ctx.db.selectFrom('webhook_subscriptions').selectAll().orderBy('created_at').orderBy('id');
      if (!user.admin) {
        if (!user.clientIds?.length) return { subscriptions: [] };
        q = q.where('client_id', 'in', user.clientIds);
      }
      return { subscriptions: (await q.execute()).map(presentSubscription) };
    },
  );
}
