import type { App, AppContext } from '../../context.ts';
import { HttpError } from '../../http/errors.ts';
import { responses } from '../../http/responses.ts';

const methodNotAllowed = (method: string) =>
  new HttpError(405, `Method ${method} not allowed: use PUT`, { headers: { allow: 'PUT' } });

/**
 * Any other method on /api/refresh: 405 with `Allow: PUT` (docs/api.md#error-body-and-status-codes). It answers in
 * `onRequest`, before authentication and before any body is parsed, so the method alone
 * decides. HEAD comes with GET. Not part of the OpenAPI document.
 */
export default function register(app: App, _ctx: AppContext): void {
  app.route({
    method: ['GET', 'POST', 'PATCH', 'DELETE', 'OPTIONS'],
    url: '/refresh',
    schema: { hide: true, response: responses({}, 405) },
    onRequest: async (request) => {
      throw methodNotAllowed(request.method);
    },
    handler: async (request) => {
      throw methodNotAllowed(request.method);
    },
  });
}
