import { DeletedLicenseResponse, LicenseIdQuery } from '@svc/protocol';
import { requireUser, userOf } from '../../auth/guards.ts';
import { actorOf } from '../../auth/principal.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';
import { deleteLicense } from '../../licenses/lifecycle.ts';

/** DELETE /api/licenses?id=: only a revoked key (409 otherwise). */
export default function register(app: App, ctx: AppContext): void {
  app.delete(
    '/licenses',
    {
      onRequest: requireUser(ctx, { adminOnly: true }),
      schema: {
        operationId: 'deleteLicense',
        tags: ['licenses'],
        summary: 'Delete a revoked license key',
        security: [{ identityToken: [] }],
        querystring: LicenseIdQuery,
        response: responses({ 200: DeletedLicenseResponse }, 400, 401, 403, 404, 409),
      },
    },
    async (request) => {
      const { id } = request.query;
      await deleteLicense(ctx, id, actorOf(userOf(request)));
      return { ok: true as const, id };
    },
  );
}
