import { TargetsQuery, TargetsResponse } from '@svc/protocol';
import { requireUser, userOf } from '../../auth/guards.ts';
import { scopeOf } from '../../auth/principal.ts';
import type { App, AppContext } from '../../context.ts';
import { DomainError } from '../../domain/errors.ts';
import { responses } from '../../http/responses.ts';
import { presentTarget } from '../../records/present.ts';
import { targetsOf } from '../../records/queries.ts';

/**
 * GET /api/targets[?client_id=][&target=]: the scanned targets the caller may see, each with its
 * latest session, what that session looked at (coverage: hosts, ports, profile, tools) and its
 * open and resolved findings of record. The console's command form offers a target's usual
 * ports and profile from it. At most 1,000 targets.
 */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/targets',
    {
      onRequest: requireUser(ctx, { permission: 'sessions:read' }),
      schema: {
        operationId: 'listTargets',
        tags: ['findings'],
        summary: 'Scanned targets with their latest coverage and counts of findings of record',
        security: [{ identityToken: [] }],
        querystring: TargetsQuery,
        response: responses({ 200: TargetsResponse }, 400, 401, 403),
      },
    },
    async (request) => {
      const scope = scopeOf(userOf(request));
      const named = request.query.client_id;
      if (named !== undefined && scope !== null && !scope.includes(named))
        throw new DomainError('forbidden.client', 'Access to this client is not allowed');
      const rows = await targetsOf(ctx.db, named === undefined ? scope : [named], request.query.target);
      return { targets: rows.map(presentTarget) };
    },
  );
}
