import { Type } from '@sinclair/typebox';
import { CommandDetailResponse, CommandListResponse, CommandsQuery, PollResponse } from '@svc/protocol';
import { commandDetail, listCommands } from '../../agents/history.ts';
import { pollCommands } from '../../agents/poll.ts';
import { cancelField, presentCancels, presentPolled } from '../../agents/present.ts';
import { keyHolderOf, requireKey, requireUser, userOf } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';

/**
 * GET /api/agent-commands has two audiences on one path:
 * - `?agent_id=` the agent poll (x-api-key with agent:commands): up to 50 pending
 *   commands in delivery order, which become `sent`;
 * - otherwise the read-only admin history (X-Identity-Token, agent:commands):
 *   `?command_id=` one command with its result, else the newest `limit` commands.
 */
export default function register(app: App, ctx: AppContext): void {
  const agentGuard = requireKey(ctx, { permission: 'agent:commands' });
  const adminGuard = requireUser(ctx, { permission: 'agent:commands' });
  app.get(
    '/agent-commands',
    {
      onRequest: async function (request, reply) {
        const agentId = (request.query as { agent_id?: unknown }).agent_id;
        await (agentId !== undefined ? agentGuard : adminGuard).call(this, request, reply);
      },
      schema: {
        operationId: 'pollAgentCommands',
        tags: ['agents'],
        summary: 'Agent poll (agent_id) or command history (limit, command_id)',
        security: [{ apiKey: [] }, { identityToken: [] }],
        querystring: CommandsQuery,
        // fast-json-stringify serialises with the FIRST union member that validates, and a
        // history item also satisfies the poll item schema: most specific first.
        response: responses(
          { 200: Type.Union([CommandDetailResponse, CommandListResponse, PollResponse]) },
          400,
          401,
          403,
          404,
        ),
      },
    },
    async (request, reply) => {
      const q = request.query;
      if (q.agent_id !== undefined) {
        const claim = await pollCommands(ctx, keyHolderOf(request), q.agent_id);
        const body = { commands: claim.commands.map(presentPolled), ...cancelField(presentCancels(claim.cancel)) };
        // Serialised here: with no command, the union's history list (first) would match and drop `cancel`.
        return reply.type('application/json; charset=utf-8').send(JSON.stringify(body));
      }
      const user = userOf(request);
      if (q.command_id !== undefined) return commandDetail(ctx, user, q.command_id);
      return { commands: await listCommands(ctx, user, q.limit ?? 50, q.status) };
    },
  );
}
