import fs from 'node:fs';
import path from 'node:path';
import {
  CONFIG_KEY_NOT_ALLOWED,
  checkRemoteConfigValue,
  hasControlOrSeparator,
  isRemoteConfigKey,
} from '@svc/protocol';
import { parse } from 'dotenv';

/** The push_config layer: a dotfile, so the `*.conf` schedule glob never matches it. */
export const OVERRIDES_FILE = '.c2_overrides.conf';

export const overridesPath = (configDir: string): string => path.join(configDir, OVERRIDES_FILE);

export interface OverridesReading {
  values: Record<string, string>;
  /** One message per refused line (not in the allowlist, a bad value, a newline or control character). */
  refused: string[];
}

/**
 * Reads the overrides file with the same rules push_config applies (SPEC "Agent behavior" 3):
 * a hand-edited key outside the allowlist, or a value the rules refuse, is dropped with a message.
 * Raw lines are checked for CR and controls first, because dotenv would turn a quoted `\n` into one.
 */
export function readOverrides(configDir: string): OverridesReading {
  let text: string;
  try {
    text = fs.readFileSync(overridesPath(configDir), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { values: {}, refused: [] };
    throw err;
  }
  const values: Record<string, string> = {};
  const refused: string[] = [];
  for (const [key, value] of Object.entries(parse(text))) {
    if (!isRemoteConfigKey(key)) {
      refused.push(`${key}: ${CONFIG_KEY_NOT_ALLOWED}`);
      continue;
    }
    if (hasControlOrSeparator(value)) {
      refused.push(`${key}: config_value must not contain control characters`);
      continue;
    }
    const check = checkRemoteConfigValue(key, value);
    if (!check.ok) refused.push(`${key}: config_value ${check.reason}`);
    else values[key] = check.value;
  }
  return { values, refused };
}

/**
 * Appends one checked KEY=VALUE line (the last line per key wins when read back); the file is
 * created mode 600 and kept at 600.
 */
export function appendOverride(configDir: string, key: string, value: string): void {
  if (!isRemoteConfigKey(key)) throw new Error(CONFIG_KEY_NOT_ALLOWED);
  const check = checkRemoteConfigValue(key, value);
  if (!check.ok) throw new Error(`config_value ${check.reason}`);
  const file = overridesPath(configDir);
  fs.appendFileSync(file, `${key}=${check.value}\n`, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
}
