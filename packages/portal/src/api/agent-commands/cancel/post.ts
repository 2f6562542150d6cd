import { CancelCommandBody, CancelCommandResponse } from '@svc/protocol';
import { cancelCommand } from '../../../agents/cancel.ts';
import { requireUser, userOf } from '../../../auth/guards.ts';
import type { App, AppContext } from '../../../context.ts';
import { responses } from '../../../http/responses.ts';

/** POST /api/agent-commands/cancel: an admin cancels a pending, sent or running command. */
export default function register(app: App, ctx: AppContext): void {
  app.post(
    '/agent-commands/cancel',
    {
      onRequest: requireUser(ctx, { adminOnly: true }),
      schema: {
        operationId: 'cancelAgentCommand',
        tags: ['agents'],
        summary: 'Cancel a command (admin only)',
        description:
          "A path of its own rather than an action of PATCH /api/agent-commands, which is the agent's status report (x-api-key). " +
          'A pending or sent command becomes `failed` at once, with exit_code null and stderr "Cancelled by <admin>: <reason>", and is never delivered (its agent\'s later ack gets a 409 and the agent skips it); `command_failed` is audited and sent with `reason: "cancelled"` and `cancelled_by`. ' +
          "A running (acked) command gets `cancel_requested`; its agent is told in its next heartbeat or poll answer (`cancel`), kills the command's process tree and reports it `failed` with exit code 130 and the reason in stderr; an agent that has not confirmed within 10 minutes has the command failed by the portal. " +
          'Answers the command as it is now, with its result once it ended. 404: no such command; 409: the command already completed or failed, or its cancellation was already requested.',
        security: [{ identityToken: [] }],
        body: CancelCommandBody,
        response: responses({ 200: CancelCommandResponse }, 400, 401, 403, 404, 409),
      },
    },
    async (request) => cancelCommand(ctx, userOf(request), request.body),
  );
}
