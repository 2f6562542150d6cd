import type { Kysely } from 'kysely';
import { CANCEL_CONFIRM_SECONDS, cancelMessage, expiredMessage, type PortalFailureReason } from '@svc/protocol';
import { type AuditInput, recordAuditEvents } from '../audit/record.ts';
import type { AppContext } from '../context.ts';
import type { Database } from '../db/schema.ts';
import { expiredCommands, failCommands, type OpenCommand, unconfirmedCancels } from './lifecycle-queries.ts';
import { clientOut } from './resolve.ts';

/** Commands failed per transaction: each pass stays short however many commands are due. */
const BATCH = 500;
/** How often each replica sweeps: expiry and an unconfirmed cancellation are minutes-scale rules. */
export const COMMAND_SWEEP_EVERY_MS = 60_000;

/**
 * The portal's own end of commands nobody reports on (docs/agent/commands.md, "Cancel, expiry
 * and redelivery"): a pending or sent command past its expiry is failed as expired, and a
 * running command whose agent has not confirmed its cancellation within CANCEL_CONFIRM_SECONDS
 * is failed as cancelled. Each is audited and sent as `command_failed` (actor `system`) with
 * `reason`. Replicas sweeping at once never fail one command twice: the rows are taken with
 * SKIP LOCKED and failed in the same transaction.
 */
export async function sweepCommandLifecycle(ctx: AppContext): Promise<{ expired: number; cancelled: number }> {
  const expired = await sweepBatches(ctx, (trx, now) => expiredCommands(trx, now, BATCH), 'expired');
  const cancelled = await sweepBatches(
    ctx,
    (trx, now) => unconfirmedCancels(trx, new Date(now.getTime() - CANCEL_CONFIRM_SECONDS * 1000), BATCH),
    'cancelled',
  );
  return { expired, cancelled };
}

type Select = (trx: Kysely<Database>, now: Date) => Promise<OpenCommand[]>;

function messageOf(cmd: OpenCommand, reason: PortalFailureReason): string {
  if (reason === 'expired') return expiredMessage(cmd.expires_at, cmd.status === 'pending' ? 'pending' : 'sent');
  const stop = `; the agent did not confirm it stopped the command within ${CANCEL_CONFIRM_SECONDS / 60} minutes`;
  return `${cancelMessage(cmd.cancel_requested_by ?? 'an admin', cmd.cancel_reason)}${stop}`;
}

async function sweepBatches(ctx: AppContext, select: Select, reason: PortalFailureReason): Promise<number> {
  let total = 0;
  for (;;) {
    const now = ctx.now();
    const { events, due } = await ctx.db.transaction().execute(async (trx) => {
      const rows = await select(trx, now);
      const byId = new Map(rows.map((r) => [r.id, r]));
      const failed = await failCommands(
        trx,
        rows.map((r) => ({ id: r.id, message: messageOf(r, reason) })),
        now,
      );
      const inputs = failed.map((id) => failureEvent(byId.get(id) as OpenCommand, reason, now));
      return { events: inputs.length === 0 ? [] : await recordAuditEvents(trx, inputs), due: rows.length };
    });
    for (const e of events) ctx.events.publish(e);
    total += events.length;
    if (due < BATCH) return total;
  }
}

function failureEvent(cmd: OpenCommand, reason: PortalFailureReason, now: Date): AuditInput {
  return {
    event_type: 'command_failed',
    actor: 'system',
    client_id: clientOut(cmd.client_id),
    data: {
      command_id: Number(cmd.id),
      agent_id: cmd.agent_id,
      command_type: cmd.command_type,
      exit_code: null,
      session_id: null,
      completed_at: now.toISOString(),
      reason,
      ...(reason === 'expired'
        ? { expires_at: cmd.expires_at.toISOString() }
        : { cancelled_by: cmd.cancel_requested_by, cancel_reason: cmd.cancel_reason }),
    },
  };
}

export interface CommandSweeper {
  stop(): Promise<void>;
}

/** The sweep in the background: at once, then every COMMAND_SWEEP_EVERY_MS; a failed pass is logged and the next one tries again. */
export function startCommandSweeper(ctx: AppContext, everyMs = COMMAND_SWEEP_EVERY_MS): CommandSweeper {
  let pass: Promise<unknown> = Promise.resolve();
  const run = () => {
    pass = pass
      .then(() => sweepCommandLifecycle(ctx))
      .then((n) => {
        if (n.expired + n.cancelled > 0)
          ctx.logger.info(n, 'commands ended by the portal (expired, unconfirmed cancellations)');
      })
      .catch((err: unknown) => ctx.logger.error({ err }, 'command lifecycle sweep failed'));
  };
  const timer = setInterval(run, everyMs).unref();
  run();
  return {
    async stop() {
      clearInterval(timer);
      await pass;
    },
  };
}
