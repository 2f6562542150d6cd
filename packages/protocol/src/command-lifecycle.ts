import { Type, type Static } from '@sinclair/typebox';

/**
 * How a command ends besides the agent's own report (docs/agent/commands.md, "Cancel, expiry
 * and redelivery"): an admin cancels it, it expires before the agent started it, its agent is
 * deregistered, or a heartbeat answer was lost and it is delivered again. The portal and svcd
 * both read these rules from here.
 */

/** A command not started by then is failed as expired: 24 hours after it was queued, unless the queue said otherwise. */
export const COMMAND_EXPIRY_DEFAULT_SECONDS = 86_400;
/** `expires_in_seconds` bounds: at least a minute (a heartbeat can reach the agent), at most 30 days. */
export const COMMAND_EXPIRY_MIN_SECONDS = 60;
export const COMMAND_EXPIRY_MAX_SECONDS = 30 * 86_400;

/**
 * A `sent` command its agent has not acknowledged within this window is handed out again by
 * the next heartbeat or poll (the answer that carried it may have been lost). Twice the
 * default heartbeat interval (300 s): an agent that got it has acked it long before.
 */
export const REDELIVERY_WINDOW_SECONDS = 600;

/**
 * A running command whose cancellation the agent has not confirmed within this window (the
 * agent is gone, or too old to know cancellation) is failed by the portal itself.
 */
export const CANCEL_CONFIRM_SECONDS = 600;

/** The exit code svcd reports for a command it stopped because the portal cancelled it (128 + SIGINT, as a shell reports Ctrl-C). */
export const EXIT_CANCELLED = 130;

/** The statuses a cancellation applies to: not delivered yet, delivered, or running. */
export const CANCELLABLE_STATUSES = ['pending', 'sent', 'acked'] as const;

export function isCancellable(status: string): boolean {
  return (CANCELLABLE_STATUSES as readonly string[]).includes(status);
}

/** Why the portal ended a command itself: the `reason` field of its `command_failed` event. */
export const PORTAL_FAILURE_REASONS = ['cancelled', 'expired'] as const;
export type PortalFailureReason = (typeof PORTAL_FAILURE_REASONS)[number];

/** The result's stderr (and the agent's kill reason) of a cancelled command: "Cancelled by <admin>: <reason>". */
export function cancelMessage(by: string, reason: string | null | undefined): string {
  const why = reason?.trim() ?? '';
  return why === '' ? `Cancelled by ${by}` : `Cancelled by ${by}: ${why}`;
}

/** The result's stderr of a command that expired before its agent started it. */
export function expiredMessage(expiresAt: Date, status: 'pending' | 'sent'): string {
  const where = status === 'pending' ? 'before it was delivered' : 'before the agent started it';
  return `Expired at ${expiresAt.toISOString()} ${where}`;
}

/** The result's stderr of a command not started that its agent's deregistration dropped. */
export const AGENT_DEREGISTERED_MESSAGE = 'Agent deregistered';
/** …and of one it was running: a deregistered agent's reports are refused, so the portal ends it. */
export const AGENT_DEREGISTERED_RUNNING_MESSAGE =
  'Agent deregistered while the command ran: its report is no longer accepted';

/** A running command the agent must stop: in the heartbeat and poll answers' `cancel`. */
export const CommandCancel = Type.Object({
  id: Type.Integer(),
  reason: Type.String({ description: 'Cancelled by <admin>: <reason>, as the result keeps it' }),
});
export type CommandCancel = Static<typeof CommandCancel>;

export const CANCEL_REASON_MAX = 500;

/** POST /api/agent-commands/cancel. */
export const CancelCommandBody = Type.Object(
  {
    command_id: Type.Integer({ minimum: 1 }),
    reason: Type.Optional(Type.String({ maxLength: CANCEL_REASON_MAX })),
  },
  { additionalProperties: false },
);
export type CancelCommandBody = Static<typeof CancelCommandBody>;
