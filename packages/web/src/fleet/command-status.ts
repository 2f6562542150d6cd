import { type CommandStatus, isFinalCommandStatus } from '@svc/protocol';
import { formatDuration } from '../ui/format.ts';

/** Command history: when to keep polling, and a command's target. */

/** Poll while any listed command can still change. */
export const needsPolling = (commands: ReadonlyArray<{ status: CommandStatus }>): boolean =>
  commands.some((c) => !isFinalCommandStatus(c.status));

/** The target a command was queued to, by the agent's host name when known; the group when broadcast. */
export function commandTarget(c: {
  agent_id: string;
  agent_hostname: string | null;
  group_target: string | null;
}): string {
  const name = c.agent_hostname ?? c.agent_id;
  return c.group_target === null ? name : `${name} (group ${c.group_target})`;
}

/**
 * How long a command has run, in words: from the agent's acknowledgement (else its delivery)
 * to its end, or to `now` while it runs; null before it reached the agent. A run_scan's
 * progress, when its agent reports one, is shown beside this (command-progress.tsx).
 */
export function commandElapsed(
  c: { status: CommandStatus; sent_at: string | null; acked_at: string | null; completed_at: string | null },
  now: number,
): string | null {
  const start = c.acked_at ?? c.sent_at;
  if (start === null) return null;
  const end = isFinalCommandStatus(c.status) ? (c.completed_at === null ? null : Date.parse(c.completed_at)) : now;
  if (end === null) return null;
  const took = formatDuration(Math.max(0, (end - Date.parse(start)) / 1000));
  if (isFinalCommandStatus(c.status)) return `took ${took}`;
  return `${c.acked_at === null ? 'delivered' : 'running'} for ${took}; the agent reports when it ends`;
}
