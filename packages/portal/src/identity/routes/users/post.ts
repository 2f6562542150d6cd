import { CreateUserBody, UserResponse } from '@svc/protocol';
import type { App, AppContext } from '../../../context.ts';
import { responses } from '../../../http/responses.ts';
import { presentUser } from '../../present.ts';
import { createUser } from '../../user-admin.ts';
import { identityUserOf, requireBearer } from '../bearer.ts';

/** POST /identity/admin/users: body email, password, role (admin|member), client_ids. */
export default function register(app: App, ctx: AppContext): void {
  app.post(
    '/admin/users',
    {
      preHandler: requireBearer(ctx, { admin: true }),
      schema: {
        operationId: 'createUser',
        tags: ['identity'],
        summary: 'Create a user',
        security: [{ bearer: [] }],
        body: CreateUserBody,
        response: responses({ 201: UserResponse }, 400, 401, 403, 409),
      },
    },
    async (request, reply) => {
      const row = await createUser(ctx, identityUserOf(request), request.body);
      return reply.code(201).send({ user: presentUser(row) });
    },
  );
}
