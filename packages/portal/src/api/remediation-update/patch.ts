import { RemediationUpdateBody, RemediationUpdateResponse } from '@svc/protocol';
import { requireUser, userOf } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';
import { parseSessionId } from '../../sessions/access.ts';
import { presentRemediationUpdate } from '../../sessions/present.ts';
import { parseRemediationItems } from '../../sessions/remediation.ts';
import { updateRemediation } from '../../sessions/remediation-update.ts';

/**
 * PATCH /api/remediation-update `{session_id, client_id?, items: [{title | fingerprint, status?, note?, exception?}]}`
 * (plus matching by fingerprint and risk exceptions: docs/decisions.md#risk-exceptions-through-the-same-operation).
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
          "Changes the findings of record of the session's target (docs/findings-of-record.md): each item names one finding of the session by `fingerprint` or every finding of a `title` (on every host); `results` says how many findings each item matched, `unmatched` lists the titles and fingerprints that matched none. `exception: {reason, expiry}` (by fingerprint only, on an open finding; expiry YYYY-MM-DD, today or later in UTC, else 400) accepts or changes the risk exception of that finding with the signed-in user as approver and now as approval time; `exception: null` withdraws it. `disposition: {disposition: false_positive, reason}` (by fingerprint only, reason required) marks it as a false positive, left out of both scores; null unmarks it. Every session of the target holding a changed finding states the change at once: its listing, its downloaded session_results.json (remediation entries, .summary, .metadata), exports and share page. One `remediation_updated` audit event per request. Updates of one target wait for each other; a database conflict is retried 3 times, then 409.",
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
