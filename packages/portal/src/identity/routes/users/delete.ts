import { OkBody, UserIdQuery } from '@svc/protocol';
import type { App, AppContext } from '../../../context.ts';
import { responses } from '../../../http/responses.ts';
import { deleteUser } from '../../user-admin.ts';
import { identityUserOf, requireBearer } from '../bearer.ts';

/** DELETE /identity/admin/users?id=: the last admin cannot be deleted. */
export default function register(app: App, ctx: AppContext): void {
  app.delete(
    '/admin/users',
    {
      preHandler: requireBearer(ctx, { admin: true }),
      schema: {
        operationId: 'deleteUser',
        tags: ['identity'],
        summary: 'Delete a user',
        security: [{ bearer: [] }],
        querystring: UserIdQuery,
        response: responses({ 200: OkBody }, 400, 401, 403, 404, 409),
      },
    },
    async (request) => {
      await deleteUser(ctx, identityUserOf(request), request.query.id);
      return { ok: true as const };
    },
  );
}
