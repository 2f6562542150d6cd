import type { CommandStatus } from '@svc/protocol';

/** Command history: which statuses are final, when to keep polling, and a command's target. */

const FINAL: ReadonlySet<CommandStatus> = new Set(['completed', 'failed']);

export const isFinal = (status: CommandStatus): boolean => FINAL.has(status);

/** Poll while any listed command can still change. */
export const needsPolling = (commands: ReadonlyArray<{ status: CommandStatus }>): boolean =>
  commands.some((c) => !isFinal(c.status));

/** The target a command was queued to: the group when broadcast, else the agent. */
export function commandTarget(c: { agent_id: string; group_target: string | null }): string {
  return c.group_target === null ? c.agent_id : `${c.agent_id} (group ${c.group_target})`;
}
