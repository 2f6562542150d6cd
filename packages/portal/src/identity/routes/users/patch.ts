import { UpdateUserBody, UserIdQuery, UserResponse } from '@svc/protocol';
import type { App, AppContext } from '../../../context.ts';
import { responses } from '../../../http/responses.ts';
import { presentUser } from '../../present.ts';
import { updateUser } from '../../user-admin.ts';
import { identityUserOf, requireBearer } from '../bearer.ts';

/** PATCH /identity/admin/users?id=: change password, role or client_ids. */
export default function register(app: App, ctx: AppContext): void {
  app.patch(
    '/admin/users',
    {
      preHandler: requireBearer(ctx, { admin: true }),
      schema: {
        operationId: 'updateUser',
        tags: ['identity'],
        summary: 'Update a user',
        security: [{ bearer: [] }],
        querystring: UserIdQuery,
        body: UpdateUserBody,
        response: responses({ 200: UserResponse }, 400, 401, 403, 404, 409),
      },
    },
    async (request) => ({
      user: presentUser(await updateUser(ctx, identityUserOf(request), request.query.id, request.body)),
    }),
  );
}
