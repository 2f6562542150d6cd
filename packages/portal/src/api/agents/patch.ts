import { AgentActionBody, OkBody } from '@svc/protocol';
import { changeRegistration } from '../../agents/registration.ts';
import { requireUser, userOf } from '../../auth/guards.ts';
import { actorOf } from '../../auth/principal.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';

/** PATCH /api/agents `{agent_id, client_id?, action}`: deregister, reenable or purge (admin only). */
export default function register(app: App, ctx: AppContext): void {
  app.patch(
    '/agents',
    {
      onRequest: requireUser(ctx, { adminOnly: true }),
      schema: {
        operationId: 'updateAgentRegistration',
        tags: ['agents'],
        summary: 'Deregister, re-enable or purge an agent',
        description:
          'An agent is (client_id, agent_id). An agent_id that exists under several clients needs client_id, else 409 with the client_ids.',
        security: [{ identityToken: [] }],
        body: AgentActionBody,
        response: responses({ 200: OkBody }, 400, 401, 403, 404, 409),
      },
    },
    async (request) => {
      const user = userOf(request);
      await changeRegistration(
        ctx,
        user,
        request.body.agent_id,
        request.body.client_id,
        request.body.action,
        actorOf(user),
      );
      return { ok: true as const };
    },
  );
}
