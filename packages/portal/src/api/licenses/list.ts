import { LicenseListQuery, LicenseListResponse } from '@svc/protocol';
import { requireUser } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';
import { presentLicense } from '../../licenses/present.ts';

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
    async (request) => {
      let q = ctx.db.selectFrom('licenses').selectAll().orderBy('created_at', 'desc').orderBy('id');
      if (request.query.client_id) q = q.where('client_id', '=', request.query.client_id);
      const now = ctx.now();
      const licenses = (await q.execute()).map((row) => presentLicense(row, now));
      const { status } = request.query;
      return { licenses: status ? licenses.filter((l) => l.status === status) : licenses };
    },
  );
}
