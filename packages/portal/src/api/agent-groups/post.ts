import { Type } from '@sinclair/typebox';
import { GroupMemberBody } from '@svc/protocol';
import { addToGroup } from '../../agents/groups.ts';
import { requireUser, userOf } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';

const Added = Type.Object({ success: Type.Literal(true), group_name: Type.String(), agent_id: Type.String(), created_at: Type.String() });

/** POST /api/agent-groups `{agent_id, group_name}`: add an agent to a group (created on first member). */
export default function register(app: App, ctx: AppContext): void {
  app.post(
    '/agent-groups',
    {
      onRequest: requireUser(ctx, { permission: 'agent:groups' }),
      schema: { tags: ['agents'], summary: 'Add an agent to a group', security: [{ identityToken: [] }], body: GroupMemberBody, response: responses({ 201: Added }, 400, 401, 403, 404, 409) },
    },
    async (request, reply) => {
      const { agent_id, group_name } = request.body;
      const createdAt = await addToGroup(ctx, userOf(request), agent_id, group_name);
      return reply.code(201).send({ success: true as const, group_name, agent_id, created_at: createdAt.toISOString() });
    },
  );
}
