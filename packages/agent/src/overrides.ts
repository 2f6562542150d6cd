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
 * Reads the overrides file with the same rules push_config applies (docs/agent.md):
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
  // dotenv reads a lone CR as a line end: `KEY=6<CR>0` would become 6. Such a line is refused
  // whole, before dotenv sees it; a CR ending a line (CRLF) is only a line end.
  const kept: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (!line.includes('\r')) {
      kept.push(line);
      continue;
    }
    const key =
      line
        .split('=')[0]
        ?.replace(/^\s*(export\s+)?/, '')
        .trim() ?? '';
    refused.push(
      isRemoteConfigKey(key)
        ? `${key}: config_value must not contain control characters`
        : `${key.replace(/[\u0000-\u001f\u007f]/g, '?').slice(0, 64)}: ${CONFIG_KEY_NOT_ALLOWED}`,
    );
  }
  for (const [key, value] of Object.entries(parse(kept.join('\n')))) {
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
