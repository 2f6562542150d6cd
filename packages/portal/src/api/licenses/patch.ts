import { LicenseIdQuery, LicenseResponse, UpdateLicenseBody } from '@svc/protocol';
import { requireUser, userOf } from '../../auth/guards.ts';
import { actorOf } from '../../auth/principal.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';
import { changeLicenseState } from '../../licenses/lifecycle.ts';
import { presentLicense } from '../../licenses/present.ts';

/** PATCH /api/licenses?id= with `{action}`: revoke, deactivate or activate (409 when it changes nothing). */
export default function register(app: App, ctx: AppContext): void {
  app.patch(
    '/licenses',
    {
      onRequest: requireUser(ctx, { adminOnly: true }),
      schema: {
        operationId: 'updateLicenseStatus',
        tags: ['licenses'],
        summary: 'Revoke, deactivate or activate a license key',
        security: [{ identityToken: [] }],
        querystring: LicenseIdQuery,
        body: UpdateLicenseBody,
        response: responses({ 200: LicenseResponse }, 400, 401, 403, 404, 409),
      },
    },
    async (request) => {
      const by = { actor: actorOf(userOf(request)), now: ctx.now() };
      const row = await changeLicenseState(ctx, request.query.id, request.body.action, by);
      return { license: presentLicense(row, by.now) };
    },
  );
}
