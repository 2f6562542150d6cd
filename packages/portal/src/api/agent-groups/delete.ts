import { GroupMemberQuery, OkBody } from '@svc/protocol';
import { removeFromGroup } from '../../agents/groups.ts';
import { requireUser, userOf } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';

/** DELETE /api/agent-groups?agent_id=&group_name=: remove an agent from a group. */
export default function register(app: App, ctx: AppContext): void {
  app.delete(
    '/agent-groups',
    {
      onRequest: requireUser(ctx, { permission: 'agent:groups' }),
      schema: {
        operationId: 'removeAgentFromGroup',
        tags: ['agents'],
        summary: 'Remove an agent from a group',
        description:
          "Removes the agent from its own client's group of that name. An agent_id under several clients needs client_id (else 409 with client_ids).",
        security: [{ identityToken: [] }],
        querystring: GroupMemberQuery,
        response: responses({ 200: OkBody }, 400, 401, 403, 404, 409),
      },
    },
    async (request) => {
      await removeFromGroup(
        ctx,
        userOf(request),
        request.query.agent_id,
        request.query.client_id,
        request.query.group_name,
      );
      return { ok: true as const };
    },
  );
}
