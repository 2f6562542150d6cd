import { type CancelCommandBody, cancelMessage, isCancellable } from '@svc/protocol';
import { recordAuditEvent } from '../audit/record.ts';
import { actorOf, type UserPrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { DomainError } from '../domain/errors.ts';
import { commandDetail } from './history.ts';
import { failCommands, lockCommand, requestCancel } from './lifecycle-queries.ts';
import { clientOut } from './resolve.ts';

const commandNotFound = () => new DomainError('not_found.command', 'Command not found');

/**
 * POST /api/agent-commands/cancel (docs/api.md#agents-and-commands, "Cancel"). A command not
 * started yet (pending, sent) is failed at once with "Cancelled by <admin>: <reason>" as its
 * result and is never delivered (an agent that acks it later gets a 409 and skips it); audited
 * and sent as `command_failed` with `reason: "cancelled"`. A running (acked) one keeps running
 * until its agent, told in its next heartbeat or poll answer, stops it and reports it failed;
 * the request is audited `command_cancel_requested`. Answers the command as it is now.
 */
export async function cancelCommand(ctx: AppContext, admin: UserPrincipal, body: CancelCommandBody) {
  // Ids are bigserial: one past 2^53 cannot exist, and must not reach SQL as an out-of-range literal.
  if (!Number.isSafeInteger(body.command_id)) throw commandNotFound();
  const by = actorOf(admin);
  const reason = body.reason?.trim() || null;
  const now = ctx.now();
  const event = await ctx.db.transaction().execute(async (trx) => {
    const cmd = await lockCommand(trx, String(body.command_id));
    if (!cmd || (admin.clientIds !== null && !admin.clientIds.includes(cmd.client_id))) throw commandNotFound();
    if (!isCancellable(cmd.status))
      throw new DomainError('conflict.command_finished', `Command is already ${cmd.status}: nothing to cancel`);
    const common = { command_id: Number(cmd.id), agent_id: cmd.agent_id, command_type: cmd.command_type };
    if (cmd.status === 'acked') {
      if (cmd.cancel_requested_at !== null)
        throw new DomainError(
          'conflict.cancel_requested',
          `Cancellation already requested by ${cmd.cancel_requested_by} at ${cmd.cancel_requested_at.toISOString()}; the agent has not confirmed it yet`,
        );
      await requestCancel(trx, cmd.id, now, by, reason);
      return recordAuditEvent(trx, {
        event_type: 'command_cancel_requested',
        actor: by,
        client_id: clientOut(cmd.client_id),
        data: { ...common, cancelled_by: by, cancel_reason: reason },
      });
    }
    await failCommands(trx, [{ id: cmd.id, message: cancelMessage(by, reason) }], now);
    return recordAuditEvent(trx, {
      event_type: 'command_failed',
      actor: by,
      client_id: clientOut(cmd.client_id),
      data: {
        ...common,
        exit_code: null,
        session_id: null,
        completed_at: now.toISOString(),
        reason: 'cancelled',
        cancelled_by: by,
        cancel_reason: reason,
      },
    });
  });
  ctx.events.publish(event);
  return { success: true as const, ...(await commandDetail(ctx, admin, body.command_id)) };
}
