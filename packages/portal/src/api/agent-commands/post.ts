import { QueueCommandBody, QueueCommandResponse } from '@svc/protocol';
import { queueCommands } from '../../agents/queue.ts';
import { requireUser, userOf } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';

/** POST /api/agent-commands: queue a command for an agent or a group (admin only). */
export default function register(app: App, ctx: AppContext): void {
  app.post(
    '/agent-commands',
    {
      onRequest: requireUser(ctx, { adminOnly: true }),
      schema: {
        tags: ['agents'],
        summary: 'Queue a command for one agent (agent_id) or a group (group_target)',
        description: 'priority 0-10 (default 5, higher first). payload is checked against the command table of SPEC.md.',
        security: [{ identityToken: [] }],
        body: QueueCommandBody,
        response: responses({ 201: QueueCommandResponse }, 400, 401, 403, 404, 409),
      },
    },
    async (request, reply) => {
      const { type, queued, skipped } = await queueCommands(ctx, userOf(request), request.body);
      return reply.code(201).send({
        success: true as const,
        commands: queued.map((q) => ({ id: Number(q.id), agent_id: q.agent_id, command_type: type, status: 'pending' as const, created_at: q.created_at.toISOString() })),
        ...(skipped.length > 0 ? { skipped } : {}),
      });
    },
  );
}
