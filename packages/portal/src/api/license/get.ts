import { LicenseValidation } from '@svc/protocol';
import { validationResult } from '../../auth/api-keys.ts';
import { cachedKeyFrom, lookupKeyFrom, refuseAuthorization } from '../../auth/authenticate.ts';
import { keyCallerOf } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { credentialsOf } from '../../http/credentials.ts';
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
      // The answer is always under the compression threshold (1 KB): the plugin's hooks would only look.
      compress: false,
      schema: {
        operationId: 'validateLicense',
        tags: ['licenses'],
        summary: 'Validate the x-api-key license key',
        security: [{ apiKey: [] }],
        response: responses({ 200: LicenseValidation }, 401),
      },
    },
    // Not async: a key whose answer is cached is answered at once, without a promise.
    (request, reply) => {
      // docs/api.md#credentials: checked here as well as by the app's onRequest hook (no hook of its own to run).
      const credentials = credentialsOf(request.headers);
      refuseAuthorization(credentials);
      const key = credentials.apiKey;
      if (key === undefined) throw new HttpError(401, 'Missing x-api-key header');
      void reply.header('cache-control', 'no-store');
      const caller = keyCallerOf(request);
      const cached = cachedKeyFrom(ctx, key, caller);
      if (cached !== undefined) return reply.send(validationResult(cached, ctx.now()));
      return lookupKeyFrom(ctx, key, caller).then((lookup) => validationResult(lookup, ctx.now()));
    },
  );
}
