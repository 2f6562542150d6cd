import { HeartbeatRequestBody, HeartbeatResponse, readHeartbeat } from '@svc/protocol';
import { portalSchedulesAnswer } from '../../agents/portal-schedules.ts';
import { presentHeartbeatAnswer } from '../../agents/present.ts';
import { keyHolderOf, requireKey } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { badRequest } from '../../http/errors.ts';
import { responses } from '../../http/responses.ts';

/**
 * POST /api/health: the daemon heartbeat. Upserts the agent, registers it on its first
 * heartbeat, and answers up to 20 pending commands, which become `sent` in the same step.
 * A key without agent:commands (professional) always gets `commands: []` (docs/api.md#agents-and-commands).
 * `portal_schedules` comes only when the agent's schedules changed since the revision it reports.
 */
export default function register(app: App, ctx: AppContext): void {
  app.post(
    '/health',
    {
      onRequest: requireKey(ctx),
      // No body at all (or JSON null) has every field missing: the answer names agent_id, not "body must be object".
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        operationId: 'sendHeartbeat',
        tags: ['agents'],
        summary: 'Agent heartbeat',
        description:
          "The agent is (key's client, agent_id): another client's agent with the same id is another agent. A license key's first heartbeat for an agent the legacy key registered under its client takes it over. The legacy key acts only on agents it registered and still holds (under the client_id its daemon reports); naming a license-registered agent, or a client that has license keys, is a 403; moving an agent that has commands or group memberships to another client_id is a 409. " +
          'The answer hands out pending commands (and sent ones not acked within 10 minutes), never an expired one, and `cancel: [{id, reason}]` (present only when there is one) for running commands an admin cancelled.',
        security: [{ apiKey: [] }],
        body: HeartbeatRequestBody,
        response: responses({ 200: HeartbeatResponse }, 400, 403, 409),
      },
    },
    async (request) => {
      const principal = keyHolderOf(request);
      const read = readHeartbeat(request.body, { keepClientId: principal.kind === 'legacy' });
      if (!read.ok) throw badRequest(read.message);
      const hb = read.heartbeat;
      const { receivedAt, commands, cancel, schedules } = await ctx.heartbeats.record(principal, hb);
      // Only when the agent's set changed since the revision it holds (most answers read nothing
      // more), and like commands only for a key with agent:commands.
      const held = principal.permissions.has('agent:commands') ? hb.portalSchedulesRevision : null;
      const portalSchedules = await portalSchedulesAnswer(ctx, hb.agentId, held, schedules);
      return {
        ...presentHeartbeatAnswer(receivedAt, commands, cancel),
        ...(portalSchedules === undefined ? {} : { portal_schedules: portalSchedules }),
      };
    },
  );
}
