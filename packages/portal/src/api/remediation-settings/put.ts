import { RemediationSettingsBody, RemediationSettingsResponse } from '@svc/protocol';
import { requireUser, userOf } from '../../auth/guards.ts';
import { actorOf, scopeOf } from '../../auth/principal.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';
import { settingsClient } from '../../records/settings.ts';
import { changeDueDays } from '../../sessions/due-days-change.ts';

/**
 * PUT /api/remediation-settings `{client_id?, due_days}`: the client's due days per severity
 * (days from first seen, or from reopening, to due; null: never due). Every record of the
 * client is dated again. Permission `remediation:update`; audited.
 */
export default function register(app: App, ctx: AppContext): void {
  app.put(
    '/remediation-settings',
    {
      onRequest: requireUser(ctx, { permission: 'remediation:update' }),
      schema: {
        operationId: 'setRemediationSettings',
        tags: ['findings'],
        summary: "Set a client's remediation due days per severity",
        security: [{ identityToken: [] }],
        body: RemediationSettingsBody,
        response: responses({ 200: RemediationSettingsResponse }, 400, 401, 403, 404),
      },
    },
    async (request) => {
      const user = userOf(request);
      const clientId = settingsClient(scopeOf(user), request.body.client_id);
      const event = await changeDueDays(ctx.db, {
        clientId,
        dueDays: request.body.due_days,
        by: actorOf(user),
        now: ctx.now(),
      });
      ctx.events.publish(event);
      return { client_id: clientId === '' ? null : clientId, due_days: request.body.due_days, defaults: false };
    },
  );
}
