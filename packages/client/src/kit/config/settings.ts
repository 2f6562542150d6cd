import fs from 'node:fs';
import { parse } from 'dotenv';

/**
 * Client settings: `KEY=VALUE` config files (`-c`), the environment, and command-line
 * flags. Precedence, highest first: flags, config files (a later `-c` file over an earlier
 * one), the environment, defaults. A config file wins over the environment because that is
 * what sourcing it in a shell did (docs/cli.md#license-tier: the config value
 * of SVC_API_KEY beats the environment's). The one exception is SVC_LICENSE_KEY, which is
 * read from the environment only and never shadowed (see license-key.ts).
 *
 * The files are parsed with dotenv's parser, never sourced: `KEY=VALUE`, optional `export `
 * prefix, `#` comments on their own line or after an unquoted value (dotenv ends an unquoted
 * value at any `#`, even without a space before it: quote values that contain one), single
 * quotes taken literally, double quotes with `\n` escapes, blank lines and CRLF endings
 * ignored, the last of a repeated key wins, nothing expanded or executed.
 */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export type Source = 'flag' | `config:${string}` | 'env' | 'default';

export interface SettingValue {
  value: string;
  source: Source;
}

export function readConfigFile(file: string): Record<string, string> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError(
      code === 'ENOENT'
        ? `Config file not found: ${file}`
        : code === 'EISDIR'
          ? `Config file is a directory: ${file}`
          : `Cannot read config file ${file}: ${(err as Error).message}`,
    );
  }
  return parse(text);
}

export class Settings {
  readonly #flags: Record<string, string | undefined>;
  readonly #files: { file: string; values: Record<string, string> }[];
  readonly #env: NodeJS.ProcessEnv;

  constructor(opts: { configFiles?: string[]; env?: NodeJS.ProcessEnv; flags?: Record<string, string | undefined> }) {
    this.#flags = opts.flags ?? {};
    this.#env = opts.env ?? {};
    this.#files = (opts.configFiles ?? []).map((file) => ({ file, values: readConfigFile(file) }));
  }

  /** The value and where it came from; blank values count as unset. */
  lookup(key: string): SettingValue | undefined {
    const flag = this.#flags[key];
    if (flag !== undefined && flag !== '') return { value: flag, source: 'flag' };
    for (let i = this.#files.length - 1; i >= 0; i--) {
      const entry = this.#files[i] as { file: string; values: Record<string, string> };
      const v = entry.values[key];
      if (v !== undefined && v.trim() !== '') return { value: v, source: `config:${entry.file}` };
    }
    const env = this.#env[key];
    if (env !== undefined && env.trim() !== '') return { value: env, source: 'env' };
    return undefined;
  }

  get(key: string): string | undefined {
    return this.lookup(key)?.value;
  }

  /** Only what a config file says (no flag, no environment). */
  fromConfig(key: string): SettingValue | undefined {
    for (let i = this.#files.length - 1; i >= 0; i--) {
      const entry = this.#files[i] as { file: string; values: Record<string, string> };
      const v = entry.values[key];
      if (v !== undefined && v.trim() !== '') return { value: v, source: `config:${entry.file}` };
    }
    return undefined;
  }

  /** Only what the environment says. */
  fromEnv(key: string): string | undefined {
    const v = this.#env[key];
    return v !== undefined && v.trim() !== '' ? v : undefined;
  }

  /** A whole number of seconds within [min, max], or the default; anything else is a ConfigError. */
  seconds(key: string, fallback: number, min = 1, max = 10 * 365 * 86_400): number {
    const found = this.lookup(key);
    if (found === undefined) return fallback;
    const n = Number(found.value.trim());
    if (!/^\d+$/.test(found.value.trim()) || n < min || n > max)
      throw new ConfigError(
        `${key} must be a whole number of seconds between ${min} and ${max} (got "${found.value}")`,
      );
    return n;
  }

  get env(): NodeJS.ProcessEnv {
    return this.#env;
  }
}
