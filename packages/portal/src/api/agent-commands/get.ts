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
 *   commands in delivery order (and sent ones not acked within 10 minutes), which become
 *   `sent`, with `cancel` listing running commands an admin cancelled;
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
        description:
          'The poll hands out up to 50 commands in delivery order: pending ones, and sent ones whose agent has not acked them within 10 minutes (their answer may have been lost); never an expired one. `cancel: [{id, reason}]`, present only when there is one, lists running commands an admin cancelled: the agent stops each and reports it failed. The history answers each command with `expires_at` and `cancel_requested`.',
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
