import { LicenseListQuery, LicenseListResponse } from '@svc/protocol';
import { requireUser } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';
import { listLicenses } from '../../licenses/list.ts';

/** GET /api/licenses: every key without its plaintext or hash; filters client_id and status. */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/licenses',
    {
      onRequest: requireUser(ctx, { adminOnly: true }),
      schema: {
        operationId: 'listLicenses',
        tags: ['licenses'],
        summary: 'List license keys',
        security: [{ identityToken: [] }],
        querystring: LicenseListQuery,
        response: responses({ 200: LicenseListResponse }, 400, 401, 403),
      },
    },
    async (request) => ({ licenses: await listLicenses(ctx.db, request.query, ctx.now()) }),
  );
}
