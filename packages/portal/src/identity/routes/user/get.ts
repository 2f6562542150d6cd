import { UserResponse } from '@svc/protocol';
import type { App, AppContext } from '../../../context.ts';
import { responses } from '../../../http/responses.ts';
import { presentUser } from '../../present.ts';
import { identityUserOf, requireBearer } from '../bearer.ts';

/** GET /identity/user: the user the bearer token belongs to. */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/user',
    {
      preHandler: requireBearer(ctx),
      schema: {
        operationId: 'getCurrentUser',
        tags: ['identity'],
        summary: 'Current user',
        security: [{ bearer: [] }],
        response: responses({ 200: UserResponse }, 401),
      },
    },
    async (request) => ({ user: presentUser(identityUserOf(request)) }),
  );
}
