import { type CommandStatus, isFinalCommandStatus } from '@svc/protocol';

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
