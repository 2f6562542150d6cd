import fs from 'node:fs';
import path from 'node:path';
import { KEY_CONFIG_FILE_ENV } from '@svc/protocol';
import type { Settings } from './settings.ts';

/** Where the key came from (SVC_LICENSE_SOURCE). Never the key itself. */
export type KeySource =
  | 'flag:-k'
  | 'env:SVC_LICENSE_KEY'
  | 'config:SVC_API_KEY'
  | 'env:SVC_API_KEY'
  | 'config:CONSULTATION_API_KEY'
  | 'env:CONSULTATION_API_KEY'
  | 'file:~/.svc/license.key'
  /** The agent daemon's config file the key was read from (its scans get the key in their environment). */
  | `svcd-config:${string}`;

export interface ResolvedKey {
  key: string;
  source: KeySource;
}

export const licenseKeyFile = (home: string) => path.join(home, '.svc', 'license.key');

/**
 * docs/cli.md#license-tier, in order:
 * 1. SVC_LICENSE_KEY from the environment: never shadowed (a config file cannot set it);
 * 2. SVC_API_KEY: a config file's value over the environment's;
 * 3. CONSULTATION_API_KEY (legacy alias): the same;
 * 4. ~/.svc/license.key, lowest. Its mode must be 600: a looser file is tightened to 600 with
 *    a warning (it is the user's own file, and a readable key is worse than a changed mode).
 */
export function resolveKey(settings: Settings, home: string, warn: (message: string) => void): ResolvedKey | null {
  const envKey = settings.fromEnv('SVC_LICENSE_KEY');
  if (envKey !== undefined) return { key: envKey.trim(), source: 'env:SVC_LICENSE_KEY' };
  // Only say so when it would have mattered: silently ignoring it would leave the user guessing.
  const ignored = settings.fromConfig('SVC_LICENSE_KEY');
  if (ignored !== undefined)
    warn(
      `SVC_LICENSE_KEY in ${ignored.source.slice('config:'.length)} is ignored: it is read from the environment only (a config file may set SVC_API_KEY)`,
    );
  for (const name of ['SVC_API_KEY', 'CONSULTATION_API_KEY'] as const) {
    const fromConfig = settings.fromConfig(name);
    if (fromConfig !== undefined) return { key: fromConfig.value.trim(), source: `config:${name}` };
    const fromEnv = settings.fromEnv(name);
    const agentFile = settings.fromEnv(KEY_CONFIG_FILE_ENV)?.trim();
    if (fromEnv !== undefined)
      return { key: fromEnv.trim(), source: agentFile ? `svcd-config:${agentFile}` : `env:${name}` };
  }
  return readKeyFile(licenseKeyFile(home), warn);
}

function readKeyFile(file: string, warn: (message: string) => void): ResolvedKey | null {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    return null;
  }
  if (!stat.isFile()) {
    warn(`${file} is not a regular file; ignored`);
    return null;
  }
  if ((stat.mode & 0o077) !== 0) {
    try {
      fs.chmodSync(file, 0o600);
      warn(`${file} was readable by others (mode ${(stat.mode & 0o777).toString(8)}); its mode is now 600`);
    } catch (err) {
      warn(
        `${file} is readable by others (mode ${(stat.mode & 0o777).toString(8)}) and could not be set to 600 (${(err as NodeJS.ErrnoException).code}); run: chmod 600 ${file}`,
      );
    }
  }
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    warn(`${file} cannot be read (${(err as NodeJS.ErrnoException).code}); ignored`);
    return null;
  }
  // The first non-blank, non-comment line.
  const key = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .find((l) => l !== '' && !l.startsWith('#'));
  return key === undefined ? null : { key, source: 'file:~/.svc/license.key' };
}
