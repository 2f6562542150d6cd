import path from 'node:path';
import type { DeliveredCommand } from '@svc/protocol';
import { isLogLevel } from '../../packages/client/src/agent/logger.ts';
import { Daemon, installDirOf } from '../../packages/client/src/agent/daemon.ts';
import type { CommandHost, CommandRunner } from '../../packages/client/src/agent/types.ts';

/**
 * A real svcd (the Daemon class, its signals and its re-exec) whose command runner only turns
 * the daemon-level commands into CommandHost calls: restart, shutdown, push_config,
 * set_log_level, update_schedule. It tests the host side of the seam on its own; the command
 * package has its own tests. Usage: node svcd-host-runner.ts <configDir> (env as svcd's).
 */

function hostRunner(host: CommandHost): CommandRunner {
  const report = (command: DeliveredCommand, status: 'acked' | 'completed' | 'failed', text = '') =>
    host.portal.reportCommandStatus({
      command_id: command.id,
      agent_id: host.agentId,
      status,
      ...(status === 'acked' ? {} : { exit_code: status === 'completed' ? 0 : 1, stdout: text, stderr: '' }),
    });
  return {
    async run(commands) {
      for (const c of commands) {
        await report(c, 'acked');
        const p = c.payload as Record<string, unknown>;
        try {
          let said = 'done';
          if (c.command_type === 'push_config') host.applyConfig(String(p['config_key']), String(p['config_value']));
          else if (c.command_type === 'set_log_level' && isLogLevel(p['level'])) host.setLogLevel(p['level']);
          else if (c.command_type === 'update_schedule')
            said = host.schedules.apply(String(p['schedule_id']), (p['action'] as 'update') ?? 'update', {
              cron: p['cron'] as string | undefined,
            });
          await report(c, 'completed', said);
        } catch (err) {
          await report(c, 'failed', (err as Error).message);
        }
        if (c.command_type === 'restart') return host.restart();
        if (c.command_type === 'shutdown') return host.shutdown(p['graceful'] !== false);
      }
    },
    recover: async () => undefined,
    flush: async () => undefined,
  };
}

const clientDir = path.resolve(import.meta.dirname, '../../packages/client');
const home = process.env['HOME'] as string;
const daemon = new Daemon({
  configDir: process.argv[2] as string,
  stateDir: process.env['SVC_AGENT_STATE_DIR'] as string,
  env: process.env,
  home,
  once: false,
  out: process.stdout,
  svcCommand: [path.join(clientDir, 'bin', 'svc')],
  installDir: installDirOf(clientDir),
  createRunner: hostRunner,
});
process.exitCode = await daemon.run();
