/**
 * The agent command state machine. The portal queues a command `pending`, hands it to the
 * agent (`sent`), the agent acknowledges it (`acked`) and reports how it ended (`completed` or
 * `failed`). The portal itself fails commands an agent holds when it goes away (`sent` or
 * `acked` to `failed`), and commands that are cancelled, expire or whose agent is deregistered
 * (`pending` or `sent` to `failed`; command-lifecycle.ts); a `sent` command is delivered again
 * (`sent` to `sent`) when its agent did not acknowledge it in time. The agent's own reports
 * follow AGENT_REPORTS strictly.
 */

export const COMMAND_STATUSES = ['pending', 'sent', 'acked', 'completed', 'failed'] as const;
export type CommandStatus = (typeof COMMAND_STATUSES)[number];
/** The statuses an agent may report. */
export const REPORTABLE_STATUSES = ['acked', 'completed', 'failed'] as const;
export type ReportableStatus = (typeof REPORTABLE_STATUSES)[number];

/** Every move the portal makes or accepts. */
export const COMMAND_TRANSITIONS: Readonly<Record<CommandStatus, readonly CommandStatus[]>> = {
  pending: ['sent', 'failed'],
  sent: ['sent', 'acked', 'failed'],
  acked: ['completed', 'failed'],
  completed: [],
  failed: [],
};

/** The moves an agent's status report may make: acknowledge a sent command, then end it. */
const AGENT_REPORTS: Readonly<Record<CommandStatus, readonly ReportableStatus[]>> = {
  pending: [],
  sent: ['acked'],
  acked: ['completed', 'failed'],
  completed: [],
  failed: [],
};

/** Whether an agent may report `to` for a command that is now `from` (a refused report is a 409). */
export function mayReportCommandStatus(from: string, to: string): boolean {
  return Object.hasOwn(AGENT_REPORTS, from) && (AGENT_REPORTS[from as CommandStatus] as readonly string[]).includes(to);
}

/**
 * A progress report (status `acked` with a `progress`) is taken only while the command runs,
 * i.e. once it is acked: it stores the progress and changes nothing else (no transition).
 */
export function mayReportProgress(from: string): boolean {
  return from === 'acked';
}

/** A command that can no longer change. */
export function isFinalCommandStatus(status: CommandStatus): boolean {
  return COMMAND_TRANSITIONS[status].length === 0;
}

/** The status that ends a command the agent ran: `completed` when it succeeded, else `failed`. */
export function finishedCommandStatus(ok: boolean): 'completed' | 'failed' {
  return ok ? 'completed' : 'failed';
}
