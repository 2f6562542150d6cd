import { RemediationUpdateBody, RemediationUpdateResponse } from '@svc/protocol';
import { requireUser, userOf } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';
import { parseSessionId } from '../../sessions/access.ts';
import { presentRemediationUpdate } from '../../sessions/present.ts';
import { parseRemediationItems, updateRemediation } from '../../sessions/remediation.ts';

/**
 * PATCH /api/remediation-update `{session_id, client_id?, items: [{title | fingerprint, status?, note?, exception?}]}`
 * (plus matching by fingerprint and risk exceptions: docs/decisions.md "Issue 22").
 * Identity JWT only (keys are refused with 401), permission `remediation:update`
 * (business and msp), scoped by the session's client_id (404 outside the user's scope, as
 * for a missing id; `client_id` names the client when the id exists under several, docs/api.md#ids-are-per-client).
 * The rules (matching by title or fingerprint, moves between the two arrays, exceptions,
 * optimistic locking and its 409) are in sessions/remediation.ts.
 */
export default function register(app: App, ctx: AppContext): void {
  app.patch(
    '/remediation-update',
    {
      onRequest: requireUser(ctx, { permission: 'remediation:update' }),
      schema: {
        operationId: 'updateRemediationStatus',
        tags: ['sessions'],
        summary: 'Change the remediation status, note or risk exception of items of a session',
        description:
          "Each item names one finding by `fingerprint` or every entry of a `title` (on every host); `results` says how many entries each item matched, `unmatched` lists the titles and fingerprints that matched none. `exception: {reason, expiry}` (by fingerprint only, on an open entry; expiry YYYY-MM-DD, today or later in UTC, else 400) accepts or changes the risk exception of that finding with the signed-in user as approver and now as approval time; `exception: null` withdraws it. An exception change recomputes the stored dual scoring (risk_score_operational, exception_impact) and the session's exception_summary, and is listed in the `remediation_updated` audit event (`exceptions`). Optimistic locking: 3 retries, then 409.",
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
