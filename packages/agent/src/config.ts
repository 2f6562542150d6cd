import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PortalError, readConfigFile, Settings, transportPolicyOf, uploadUrlOf } from '@svc/client/kit';
import { cronProblem, KEY_CONFIG_FILE_ENV } from '@svc/protocol';
import { readOverrides } from './overrides.ts';

/** Where the configs live unless `--config-dir` or SVC_CONFIG_DIR says otherwise. */
export function defaultConfigDir(env: NodeJS.ProcessEnv, home: string): string {
  const fromEnv = env['SVC_CONFIG_DIR']?.trim();
  if (fromEnv) return fromEnv;
  return process.getuid?.() === 0 ? '/etc/svc/configs' : path.join(home, '.svc', 'configs');
}

/** A schedule as one `*.conf` file declares it. */
export interface ScheduleFile {
  /** The file name, as heartbeats report it. */
  config: string;
  targets: string;
  cron: string;
  profile: string | undefined;
  /** A narrower port list than the profile's (svc scan --ports). */
  ports: string | undefined;
  upload: boolean;
}

export interface AgentConfig {
  configDir: string;
  /** The `*.conf` files in name order. */
  files: string[];
  /** Env < config files (later name wins) < overrides < live push_config values. */
  settings: Settings;
  /** The overrides layer as read from the file plus live changes. */
  overrides: Record<string, string>;
  /** Overrides lines refused on load. */
  refused: string[];
  schedules: ScheduleFile[];
  /** CLIENT_ID of the first config file that names one. */
  clientId: string | undefined;
}

export class MissingSettingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MissingSettingError';
  }
}

const truthy = (v: string | undefined) => v !== undefined && /^(1|true|yes|on)$/i.test(v.trim());

/**
 * One key as the configs directory and the environment give it, read before the daemon starts
 * (its state directory); a directory that cannot be read gives the environment's value.
 */
export function configuredSetting(configDir: string, env: NodeJS.ProcessEnv, key: string): string | undefined {
  let names: string[];
  try {
    names = fs.readdirSync(configDir);
  } catch {
    names = [];
  }
  const configFiles = names
    .filter((n) => n.endsWith('.conf') && !n.startsWith('.'))
    .sort()
    .map((n) => path.join(configDir, n));
  return new Settings({ configFiles, env }).get(key);
}

/** Reads the configs directory: every `*.conf` file (not dotfiles), then `.c2_overrides.conf` last. */
export function loadAgentConfig(configDir: string, env: NodeJS.ProcessEnv): AgentConfig {
  let names: string[];
  try {
    names = fs.readdirSync(configDir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new MissingSettingError(
      code === 'ENOENT' ? `Configs directory not found: ${configDir}` : `Cannot read ${configDir}: ${code}`,
    );
  }
  const files = names
    .filter((n) => n.endsWith('.conf') && !n.startsWith('.'))
    .sort()
    .map((n) => path.join(configDir, n));
  const { values: overrides, refused } = readOverrides(configDir);
  const schedules: ScheduleFile[] = [];
  let clientId: string | undefined;
  for (const file of files) {
    const values = readConfigFile(file);
    clientId ??= values['CLIENT_ID']?.trim() || undefined;
    const targets = values['SCAN_TARGETS']?.trim();
    const cron = values['SCAN_CRON']?.trim();
    if (targets && cron) {
      // Refused here, so a start fails with the reason (exit 3) and a reload keeps the running config.
      const problem = cronProblem(cron);
      if (problem !== null)
        throw new MissingSettingError(`svcd: ${path.basename(file)}: SCAN_CRON "${cron}" ${problem}`);
      schedules.push({
        config: path.basename(file),
        targets,
        cron,
        profile: values['SCAN_PROFILE']?.trim() || undefined,
        ports: values['SCAN_PORTS']?.trim() || undefined,
        upload: truthy(values['SCAN_UPLOAD']),
      });
    }
  }
  const settings = new Settings({ configFiles: files, env, flags: overrides });
  return { configDir, files, settings, overrides, refused, schedules, clientId };
}

/**
 * The portal URL and a key are required (docs/agent.md#configure); the message names what is
 * missing, or why the URL cannot be used.
 */
export function requirePortal(settings: Settings): { url: string; key: string } {
  const url = settings.get('CONSULTATION_API_URL');
  const key = settings.get('SVC_API_KEY') ?? settings.get('CONSULTATION_API_KEY') ?? settings.get('SVC_LICENSE_KEY');
  const missing = [
    ...(url === undefined ? ['CONSULTATION_API_URL'] : []),
    ...(key === undefined ? ['SVC_API_KEY (or CONSULTATION_API_KEY)'] : []),
  ];
  if (missing.length > 0 || url === undefined || key === undefined)
    throw new MissingSettingError(`svcd: missing ${missing.join(' and ')}: set it in a config file or the environment`);
  // A URL the daemon could never use (not a URL, plain http to another machine) stops it at start, like a missing one.
  try {
    uploadUrlOf(url, transportPolicyOf(settings));
  } catch (err) {
    if (err instanceof PortalError) throw new MissingSettingError(`svcd: ${err.message}`);
    throw err;
  }
  return { url, key };
}

/** Every setting as the child `svc` processes must see it: the environment plus the merged configs. */
export function childEnvOf(config: AgentConfig, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const merged: NodeJS.ProcessEnv = { ...env };
  const keys = new Set<string>(Object.keys(config.overrides));
  for (const file of config.files) for (const k of Object.keys(readConfigFile(file))) keys.add(k);
  for (const k of keys) {
    const v = config.settings.get(k);
    if (v !== undefined) merged[k] = v;
  }
  // The key reaches `svc` through its environment: the file it came from goes with it, so the
  // session's license source names that file (packages/client/src/kit/config/license-key.ts).
  const key = config.settings.lookup('SVC_API_KEY') ?? config.settings.lookup('CONSULTATION_API_KEY');
  delete merged[KEY_CONFIG_FILE_ENV];
  if (key?.source.startsWith('config:')) merged[KEY_CONFIG_FILE_ENV] = key.source.slice('config:'.length);
  return merged;
}

export const homeOf = (env: NodeJS.ProcessEnv): string => env['HOME'] ?? os.homedir();
