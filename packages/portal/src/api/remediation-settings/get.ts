import { RemediationSettingsQuery, RemediationSettingsResponse } from '@svc/protocol';
import { requireUser, userOf } from '../../auth/guards.ts';
import { scopeOf } from '../../auth/principal.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';
import { dueDaysOf, settingsClient } from '../../records/settings.ts';

/**
 * GET /api/remediation-settings[?client_id=]: the client's remediation due days per severity
 * (docs/findings-of-record.md#due-dates), the defaults while it has none of its own.
 */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/remediation-settings',
    {
      onRequest: requireUser(ctx, { permission: 'sessions:read' }),
      schema: {
        operationId: 'getRemediationSettings',
        tags: ['findings'],
        summary: "A client's remediation due days per severity",
        security: [{ identityToken: [] }],
        querystring: RemediationSettingsQuery,
        response: responses({ 200: RemediationSettingsResponse }, 400, 401, 403, 404),
      },
    },
    async (request) => {
      const clientId = settingsClient(scopeOf(userOf(request)), request.query.client_id);
      const { dueDays, own } = await dueDaysOf(ctx.db, clientId);
      return { client_id: clientId === '' ? null : clientId, due_days: dueDays, defaults: !own };
    },
  );
}
