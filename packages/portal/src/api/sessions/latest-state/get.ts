import { ErrorBody, LatestStateQuery, LatestStateResponse } from '@svc/protocol';
import { resolveCredential } from '../../../auth/credentials.ts';
import type { App, AppContext } from '../../../context.ts';
import { DomainError } from '../../../domain/errors.ts';
import { latestState, parseTarget } from '../../../sessions/latest-state.ts';

/**
 * GET /api/sessions/latest-state?target=<target>[&client_id=] — the remediation state of the
 * client's newest session of a target, read by `svc` before its remediation stage
 * (docs/decisions.md#prior-state-from-the-portal). Scoped like download: a key
 * sees its own client; a JWT names `client_id` unless its scope is one client. Another
 * client's target, or none uploaded: 404.
 */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/sessions/latest-state',
    {
      schema: {
        operationId: 'getLatestTargetState',
        tags: ['sessions'],
        summary: "Remediation state of the client's latest session of a target",
        security: [{ identityToken: [] }, { apiKey: [] }],
        querystring: LatestStateQuery,
        response: {
          200: LatestStateResponse,
          ...Object.fromEntries([400, 401, 403, 404, 500].map((code) => [code, ErrorBody])),
        },
      },
    },
    async (request) => {
      const target = parseTarget(request.query.target);
      const caller = await resolveCredential(ctx, request, 'download');
      if (caller === null) throw new DomainError('unauthorized.credential', 'Unauthorized');
      return latestState(ctx, caller, target, request.query.client_id);
    },
  );
}
