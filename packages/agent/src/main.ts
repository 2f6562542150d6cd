import fs from 'node:fs';
import path from 'node:path';
import { Command, CommanderError } from 'commander';
import { CLIENT_VERSION } from '@svc/client/kit';
import { configuredSetting, defaultConfigDir, homeOf, MissingSettingError } from './config.ts';
import { Daemon, EXIT } from './daemon.ts';
import { installOf, selfCommandOf } from './install-kind.ts';
import { formatStatus } from './status.ts';
import { createCommandRunner } from './commands/index.ts';

/**
 * The daemon's own state (journal, unsent reports, status.json): SVC_AGENT_STATE_DIR (a config
 * file or the environment) or a fixed place.
 */
function stateDirOf(env: NodeJS.ProcessEnv, home: string, configDir: string): string {
  const configured = configuredSetting(configDir, env, 'SVC_AGENT_STATE_DIR')?.trim();
  if (configured) return configured;
  return process.getuid?.() === 0 ? '/var/lib/svc/agent' : path.join(home, '.svc', 'agent');
}

const HELP_AFTER = `
Configuration: every *.conf file of the configs directory (KEY=VALUE, name order, later wins),
then .c2_overrides.conf (push_config's allowlisted keys) as the last layer. A schedule file sets
SCAN_TARGETS and SCAN_CRON (5 fields, or 6 with seconds), optionally SCAN_PROFILE, SCAN_PORTS
and SCAN_UPLOAD (true: upload each session).
CONSULTATION_API_URL and SVC_API_KEY (or CONSULTATION_API_KEY) are required.

Signals: SIGHUP reloads the configs and overrides; SIGTERM and SIGINT shut down gracefully.
Exit codes: 0 stopped; 1 failure; 2 usage; 3 missing or unreadable configuration;
4 the portal unregistered this agent.`;

interface DaemonFlags {
  configDir?: string;
  once?: boolean;
}

/** packages/agent: this file's parent, from the sources (src/) and from the bundle (dist/) alike. */
const AGENT_DIR = path.resolve(import.meta.dirname, '..');
/**
 * `svc` ships beside the daemon: bin/svc of the same release archive (lib/svcd.mjs's parent is its
 * root), or packages/client beside packages/agent in a checkout.
 */
const RELEASE_SVC_BIN = path.join(AGENT_DIR, 'bin', 'svc');
const SVC_BIN = fs.existsSync(RELEASE_SVC_BIN)
  ? RELEASE_SVC_BIN
  : path.resolve(AGENT_DIR, '..', 'client', 'bin', 'svc');
const INSTALL = installOf(AGENT_DIR);

export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const home = homeOf(env);
  let code: number = EXIT.ok;
  const program = new Command('svcd')
    .description('the svc agent daemon: heartbeats, portal commands and scheduled scans')
    .version(CLIENT_VERSION)
    .option(
      '--config-dir <dir>',
      'configs directory (default SVC_CONFIG_DIR, /etc/svc/configs as root, ~/.svc/configs)',
    )
    .option('--once', 'one heartbeat cycle (commands included), then exit')
    .addHelpText('after', HELP_AFTER)
    .exitOverride()
    .action(async (flags: DaemonFlags) => {
      const configDir = path.resolve(flags.configDir ?? defaultConfigDir(env, home));
      let daemon: Daemon;
      try {
        daemon = new Daemon({
          configDir,
          stateDir: stateDirOf(env, home, configDir),
          env,
          home,
          once: flags.once === true,
          out: process.stdout,
          svcCommand: [SVC_BIN],
          selfCommand: selfCommandOf(INSTALL, AGENT_DIR),
          install: INSTALL,
          createRunner: createCommandRunner,
        });
      } catch (err) {
        if (!(err instanceof MissingSettingError)) throw err;
        process.stderr.write(`${err.message}\n`);
        code = EXIT.config;
        return;
      }
      code = await daemon.run();
    });
  program
    .command('status')
    .description('what the running (or last) daemon knows: agent id, portal, tier, schedules, last heartbeat')
    .option('--json', 'print the state file as JSON')
    .action((flags: { json?: boolean }) => {
      const shown = formatStatus(stateDirOf(env, home, defaultConfigDir(env, home)), flags.json === true);
      process.stdout.write(shown.text);
      code = shown.code;
    });
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    throw err;
  }
  return code;
}

process.exitCode = await main(process.argv.slice(2), process.env);
