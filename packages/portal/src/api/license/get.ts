import { LicenseValidation } from '@svc/protocol';
import { validationResult } from '../../auth/api-keys.ts';
import { lookupKey, refuseAuthorizationHeader } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { API_KEY_HEADER } from '../../http/credentials.ts';
import { HttpError } from '../../http/errors.ts';
import { responses } from '../../http/responses.ts';

/**
 * GET /api/license: validates the caller's own key. 200 for every outcome (revoked,
 * expired, unknown ...); 401 only when the header is missing. No side effects.
 */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/license',
    {
      onRequest: async (request) => refuseAuthorizationHeader(request),
      schema: {
        operationId: 'validateLicense',
        tags: ['licenses'],
        summary: 'Validate the x-api-key license key',
        security: [{ apiKey: [] }],
        response: responses({ 200: LicenseValidation }, 401),
      },
    },
    async (request, reply) => {
      const raw = request.headers[API_KEY_HEADER];
      const key = (Array.isArray(raw) ? raw[0] : raw)?.trim();
      if (!key) throw new HttpError(401, 'Missing x-api-key header');
      void reply.header('cache-control', 'no-store');
      return validationResult(await lookupKey(ctx, request, key), ctx.now());
    },
  );
}
