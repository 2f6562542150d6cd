import { AgentActionBody, OkBody } from '@svc/protocol';
import { changeRegistration } from '../../agents/registration.ts';
import { requireUser, userOf } from '../../auth/guards.ts';
import { actorOf } from '../../auth/principal.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';

/** PATCH /api/agents `{agent_id, action}`: deregister, reenable or purge (admin only). */
export default function register(app: App, ctx: AppContext): void {
  app.patch(
    '/agents',
    {
      onRequest: requireUser(ctx, { adminOnly: true }),
      schema: { tags: ['agents'], summary: 'Deregister, re-enable or purge an agent', security: [{ identityToken: [] }], body: AgentActionBody, response: responses({ 200: OkBody }, 400, 401, 403, 404, 409) },
    },
    async (request) => {
      await changeRegistration(ctx, request.body.agent_id, request.body.action, actorOf(userOf(request)));
      return { ok: true as const };
    },
  );
}
