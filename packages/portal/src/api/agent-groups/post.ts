import { Type } from '@sinclair/typebox';
import { GroupMemberBody } from '@svc/protocol';
import { addToGroup } from '../../agents/groups.ts';
import { requireUser, userOf } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';

const Added = Type.Object({
  success: Type.Literal(true),
  group_name: Type.String(),
  agent_id: Type.String(),
  client_id: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
});

/** POST /api/agent-groups `{agent_id, group_name, client_id?}`: add an agent to its client's group (created on first member). */
export default function register(app: App, ctx: AppContext): void {
  app.post(
    '/agent-groups',
    {
      onRequest: requireUser(ctx, { permission: 'agent:groups' }),
      schema: {
        operationId: 'addAgentToGroup',
        tags: ['agents'],
        summary: 'Add an agent to a group',
        description:
          "Groups are per client: the agent joins its own client's group of that name (created on its first member). A scoped user can add only its clients' agents. An agent_id under several clients needs client_id (else 409 with client_ids).",
        security: [{ identityToken: [] }],
        body: GroupMemberBody,
        response: responses({ 201: Added }, 400, 401, 403, 404, 409),
      },
    },
    async (request, reply) => {
      const { agent_id, group_name, client_id } = request.body;
      const added = await addToGroup(ctx, userOf(request), agent_id, client_id, group_name);
      return reply.code(201).send({
        success: true as const,
        group_name,
        agent_id,
        client_id: added.clientId,
        created_at: added.createdAt.toISOString(),
      });
    },
  );
}
