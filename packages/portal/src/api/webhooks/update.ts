import { UpdateWebhookBody, WebhookIdQuery, WebhookResponse } from '@svc/protocol';
import { requireUser, userOf } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';
import { assertClientAllowed, assertSafeUrl, subscriptionFor } from '../../webhooks/access.ts';
import { presentSubscription } from '../../webhooks/present.ts';
import { withinClientLimits } from '../../webhooks/subscription-limits.ts';

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
      const user = userOf(request);
      const current = await subscriptionFor(ctx, user, request.query.id);
      const body = request.body;
      if (body.client_id !== undefined) assertClientAllowed(user, body.client_id);
      const url = body.url === undefined ? undefined : await assertSafeUrl(ctx, user, body.url);
      // enabled:true is the operator's "try again": it re-enables a disabled subscription and
      // starts the failure count afresh (also on one that is still enabled).
      const reenabled = body.enabled === true;
      const clientId = body.client_id === undefined ? current.client_id : body.client_id;
      const moved = clientId !== current.client_id;
      const slot = {
        clientId,
        url: url ?? current.url,
        ownId: current.id,
        counts: moved,
        max: ctx.config.webhooks.maxPerClient,
      };
      const update = (db: Pick<typeof ctx.db, 'updateTable'>) =>
        db
          .updateTable('webhook_subscriptions')
          .set({
            ...(url !== undefined ? { url } : {}),
            ...(body.event_types !== undefined ? { event_types: body.event_types } : {}),
            ...(body.description !== undefined ? { description: body.description } : {}),
            ...(body.client_id !== undefined ? { client_id: body.client_id } : {}),
            ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
            ...(reenabled ? { consecutive_failures: 0, disabled_reason: null } : {}),
            updated_at: ctx.now(),
          })
          .where('id', '=', current.id)
          .returningAll()
          .executeTakeFirstOrThrow();
      // Only a new URL or client can break the per-client limits; other changes need no lock.
      const row = url !== undefined || moved ? await withinClientLimits(ctx.db, slot, update) : await update(ctx.db);
      return { subscription: presentSubscription(row) };
    },
  );
}
