import { AGENT_LOG_LEVELS, type REMOTE_CONFIG_ALLOWLIST } from './agents.ts';

/**
 * The value rules of push_config, shared by the portal (which refuses a bad command with a
 * 400 before queueing it) and the agent (which checks again before writing its config).
 * Pure functions returning a result; the caller turns a refusal into its own error.
 */

export type RemoteConfigKey = (typeof REMOTE_CONFIG_ALLOWLIST)[number];

type ValueRule =
  | { kind: 'integer'; min: number; max: number; unit?: string }
  | { kind: 'boolean' }
  | { kind: 'enum'; values: readonly string[] };

/** Per allowlisted key: what its value must be. Intervals and backoff are seconds. */
export const REMOTE_CONFIG_RULES: Readonly<Record<RemoteConfigKey, ValueRule>> = {
  DAEMON_POLL_INTERVAL: { kind: 'integer', min: 10, max: 86_400, unit: 'seconds' },
  DAEMON_HEARTBEAT_INTERVAL: { kind: 'integer', min: 10, max: 86_400, unit: 'seconds' },
  DAEMON_SCAN_RETRY_MAX: { kind: 'integer', min: 0, max: 20 },
  DAEMON_SCAN_RETRY_BACKOFF: { kind: 'integer', min: 1, max: 3_600, unit: 'seconds' },
  DAEMON_LOG_LEVEL: { kind: 'enum', values: AGENT_LOG_LEVELS },
  ALERT_ENABLED: { kind: 'boolean' },
  ALERT_RISK_THRESHOLD: { kind: 'integer', min: 0, max: 100 },
  ALERT_ON_NEW_CRITICAL: { kind: 'boolean' },
  // A minute at least: a pushed typo must not kill every scan of a fleet at once; 72 hours at most.
  SVC_SCAN_TIMEOUT: { kind: 'integer', min: 60, max: 259_200, unit: 'seconds' },
};

/**
 * Every Unicode control (Cc: C0, DEL and C1 U+0080–U+009F) and every line or paragraph
 * separator (Zl, Zp: U+2028, U+2029): any of them could end a line in the agent's config
 * file or in a log, and none belongs in a setting. Refused with the same message as the
 * C0 controls always were ("must not contain control characters").
 */
const CONTROL_OR_SEPARATOR = /[\p{Cc}\p{Zl}\p{Zp}]/u;
const DECIMAL = /^(0|[1-9][0-9]{0,8})$/;

export function isRemoteConfigKey(key: unknown): key is RemoteConfigKey {
  return typeof key === 'string' && Object.hasOwn(REMOTE_CONFIG_RULES, key);
}

export function hasControlOrSeparator(text: string): boolean {
  return CONTROL_OR_SEPARATOR.test(text);
}

/** What a refused value must be, phrased to follow "config_value ..." in a message. */
export function describeRemoteConfigRule(key: RemoteConfigKey): string {
  const rule = REMOTE_CONFIG_RULES[key];
  switch (rule.kind) {
    case 'integer':
      return `must be an integer from ${rule.min} to ${rule.max}${rule.unit ? ` (${rule.unit})` : ''} for ${key}`;
    case 'boolean':
      return `must be true or false for ${key}`;
    case 'enum':
      return `must be one of ${rule.values.join(', ')} for ${key}`;
  }
}

export type RemoteConfigCheck = { ok: true; value: string } | { ok: false; reason: string };

/**
 * Check one push_config value for an allowlisted key and give its canonical string form
 * (what the agent writes): JSON numbers and booleans are accepted as well as their
 * decimal / `true` / `false` strings. `reason` follows "config_value" in a message.
 */
export function checkRemoteConfigValue(key: RemoteConfigKey, value: unknown): RemoteConfigCheck {
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean')
    return { ok: false, reason: 'must be a string, number or boolean' };
  const text = String(value);
  if (hasControlOrSeparator(text)) return { ok: false, reason: 'must not contain control characters' };
  const rule = REMOTE_CONFIG_RULES[key];
  const refused = { ok: false as const, reason: describeRemoteConfigRule(key) };
  switch (rule.kind) {
    case 'integer': {
      if (typeof value === 'boolean' || !DECIMAL.test(text)) return refused;
      const n = Number(text);
      return n >= rule.min && n <= rule.max ? { ok: true, value: String(n) } : refused;
    }
    case 'boolean':
      return text === 'true' || text === 'false' ? { ok: true, value: text } : refused;
    case 'enum':
      return typeof value === 'string' && rule.values.includes(value) ? { ok: true, value } : refused;
  }
}
