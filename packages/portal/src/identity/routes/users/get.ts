import { UserListResponse } from '@svc/protocol';
import type { App, AppContext } from '../../../context.ts';
import { responses } from '../../../http/responses.ts';
import { presentUser } from '../../present.ts';
import { listUsers } from '../../queries.ts';
import { requireBearer } from '../bearer.ts';

/** GET /identity/admin/users */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/admin/users',
    {
      preHandler: requireBearer(ctx, { admin: true }),
      schema: {
        operationId: 'listUsers',
        tags: ['identity'],
        summary: 'List users',
        security: [{ bearer: [] }],
        response: responses({ 200: UserListResponse }, 401, 403),
      },
    },
    async () => ({ users: (await listUsers(ctx.db)).map(presentUser) }),
  );
}
