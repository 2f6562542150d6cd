import { RemediationUpdateBody, RemediationUpdateResponse } from '@svc/protocol';
import { requireUser, userOf } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';
import { parseSessionId } from '../../sessions/access.ts';
import { presentRemediationUpdate } from '../../sessions/present.ts';
import { parseRemediationItems, updateRemediation } from '../../sessions/remediation.ts';

/**
 * PATCH /api/remediation-update `{session_id, client_id?, items: [{title, status, note?}]}` (SPEC).
 * Identity JWT only (keys are refused with 401), permission `remediation:update`
 * (business and msp), scoped by the session's client_id (404 outside the user's scope, as
 * for a missing id; `client_id` names the client when the id exists under several, D17).
 * The rules (matching by title, moves between the two arrays, optimistic locking and its
 * 409) are in sessions/remediation.ts.
 */
export default function register(app: App, ctx: AppContext): void {
  app.patch(
    '/remediation-update',
    {
      onRequest: requireUser(ctx, { permission: 'remediation:update' }),
      schema: {
        operationId: 'updateRemediationStatus',
        tags: ['sessions'],
        summary: 'Change the remediation status of items of a session',
        security: [{ identityToken: [] }],
        body: RemediationUpdateBody,
        response: responses({ 200: RemediationUpdateResponse }, 400, 401, 403, 404, 409),
      },
    },
    async (request) => {
      const user = userOf(request);
      const sessionId = parseSessionId(request.body.session_id, 'session_id');
      const items = parseRemediationItems(request.body.items, ctx.now().toISOString().slice(0, 10));
      const outcome = await updateRemediation(ctx, user, { sessionId, clientId: request.body.client_id }, items);
      return presentRemediationUpdate(sessionId, items, outcome);
    },
  );
}
