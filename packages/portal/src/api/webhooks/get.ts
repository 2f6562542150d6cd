import { WebhookListResponse } from '@svc/protocol';
import { requireUser, userOf } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';
import { presentSubscription } from '../../webhooks/present.ts';
import { listSubscriptions } from '../../webhooks/subscriptions.ts';

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
    async (request) => ({
      subscriptions: (await listSubscriptions(ctx.db, userOf(request))).map(presentSubscription),
    }),
  );
}
