import { BulkBody, BulkResponse } from '@svc/protocol';
import { requireUser, userOf } from '../../../auth/guards.ts';
import type { App, AppContext } from '../../../context.ts';
import { responses } from '../../../http/responses.ts';
import { bulkChange } from '../../../sessions/bulk-triage.ts';

/**
 * POST /api/findings/bulk (docs/findings-of-record.md#bulk-changes): one status, note, exception
 * or disposition for many findings of record, chosen by `fingerprints` (within `client_id`, and
 * `target` when given) or by `filter` (GET /api/findings's filters); one transaction, one
 * `remediation_updated` audit event per finding changed. Permission `remediation:update`.
 */
export default function register(app: App, ctx: AppContext): void {
  app.post(
    '/findings/bulk',
    {
      onRequest: requireUser(ctx, { permission: 'remediation:update' }),
      schema: {
        operationId: 'changeFindingsOfRecord',
        tags: ['findings'],
        summary: 'Change the status, note, exception or disposition of many findings at once',
        description:
          'Exactly one of `fingerprints` and `filter`; at most 10,000 findings (a filter reaching more is refused with 400). An exception needs a reason and an expiry today or later (UTC); a false positive needs a reason; exceptions only on open findings. `unmatched` lists fingerprints that name no finding in scope.',
        security: [{ identityToken: [] }],
        body: BulkBody,
        response: responses({ 200: BulkResponse }, 400, 401, 403),
      },
    },
    (request) => bulkChange(ctx, userOf(request), request.body),
  );
}
