import { GroupsResponse } from '@svc/protocol';
import { listGroups } from '../../agents/groups.ts';
import { requireUser, userOf } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';

/** GET /api/agent-groups: group name → members with created_at. */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/agent-groups',
    {
      onRequest: requireUser(ctx, { permission: 'agent:groups' }),
      schema: {
        operationId: 'listAgentGroups',
        tags: ['agents'],
        summary: 'List agent groups',
        description:
          "Groups are per client (client_id, group_name): a name used by several clients lists each client's members with their client_id. Scoped users see their clients' members only.",
        security: [{ identityToken: [] }],
        response: responses({ 200: GroupsResponse }, 401, 403),
      },
    },
    async (request) => ({ groups: await listGroups(ctx, userOf(request)) }),
  );
}
