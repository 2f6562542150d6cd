import { HeartbeatBody, HeartbeatResponse } from '@svc/protocol';
import { parseHeartbeat } from '../../agents/heartbeat-input.ts';
import { recordHeartbeat } from '../../agents/heartbeat.ts';
import { keyHolderOf, requireKey } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';

/**
 * POST /api/health: the daemon heartbeat. Upserts the agent, registers it on its first
 * heartbeat, and answers up to 20 pending commands, which become `sent` in the same step.
 * A key without agent:commands (professional) always gets `commands: []` (D2).
 */
export default function register(app: App, ctx: AppContext): void {
  app.post(
    '/health',
    {
      onRequest: requireKey(ctx),
      // No body at all (or JSON null) has every field missing: SPEC names agent_id, not "body must be object".
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        operationId: 'sendHeartbeat',
        tags: ['agents'],
        summary: 'Agent heartbeat',
        description:
          "The agent is (key's client, agent_id): another client's agent with the same id is another agent. The legacy key acts only on agents it registered (under the client_id its daemon reports); naming a license-registered agent is a 403.",
        security: [{ apiKey: [] }],
        body: HeartbeatBody,
        response: responses({ 200: HeartbeatResponse }, 400, 403),
      },
    },
    async (request) => {
      const principal = keyHolderOf(request);
      const hb = parseHeartbeat(request.body, { keepClientId: principal.kind === 'legacy' });
      const { receivedAt, commands } = await recordHeartbeat(ctx, principal, hb);
      return { success: true as const, received_at: receivedAt.toISOString(), commands };
    },
  );
}
