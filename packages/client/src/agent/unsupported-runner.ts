import type { DeliveredCommand } from '@svc/protocol';
import type { CommandHost, CommandRunner } from './types.ts';

/**
 * The runner of a daemon built without the command package: every delivered command is
 * acknowledged and reported failed, so the portal's history never shows it stuck at `sent`.
 */
export function createUnsupportedRunner(host: CommandHost): CommandRunner {
  const report = async (command: DeliveredCommand, status: 'acked' | 'failed') => {
    try {
      await host.portal.reportCommandStatus({
        command_id: command.id,
        agent_id: host.agentId,
        status,
        ...(status === 'failed'
          ? { exit_code: 1, stdout: '', stderr: `${command.command_type} is not supported yet by this agent` }
          : {}),
      });
    } catch (err) {
      host.log.warning('status report not sent', { command_id: command.id, status, error: (err as Error).message });
    }
  };
  return {
    async run(commands) {
      for (const command of commands) {
        host.log.warning('command not supported yet', { command_id: command.id, type: command.command_type });
        await report(command, 'acked');
        await report(command, 'failed');
      }
    },
    recover: async () => undefined,
    flush: async () => undefined,
  };
}
