import {
  AGENT_LOG_LEVELS,
  checkRemoteConfigValue,
  CONFIG_KEY_NOT_ALLOWED,
  isRemoteConfigKey,
  SCHEDULE_ACTIONS,
  type CommandType,
} from '@svc/protocol';
import { badRequest } from '../http/errors.ts';

type Payload = Record<string, unknown>;
type Rule = { required?: boolean; check: (value: unknown, key: string, payload: Payload) => unknown };

// Control characters (including CR and LF) never reach an agent's config or command line.
const CONTROL = /[\u0000-\u001f\u007f]/;
/** A host name, IPv4/IPv6 address or CIDR; never starting with `-`, so it cannot become a scanner option. */
const TARGET = /^[A-Za-z0-9][A-Za-z0-9.:/_-]{0,252}$/;
// Both start with a letter or digit: DESIGN 5, no value starting with `-` may reach the agent's tools as an option.
const PROFILE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const SCHEDULE_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const SESSION_NAME = /^\d{8}_\d{6}$/;
const CRON_FIELD = /^[0-9A-Za-z*/,?#LW-]+$/;
/** A git branch name that git cannot read as an option or a path escape. */
const BRANCH = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$/;
const VERSION_TAG = /^v\d+\.\d+\.\d+$/;

function text(pattern: RegExp | null, what: string) {
  return (v: unknown, key: string) => {
    if (typeof v !== 'string' || v.trim() === '') throw badRequest(`payload.${key} must be a non-empty string`);
    if (CONTROL.test(v)) throw badRequest(`payload.${key} must not contain control characters`);
    if (pattern && !pattern.test(v)) throw badRequest(`payload.${key} must be ${what}`);
    return v;
  };
}

function bool(v: unknown, key: string): boolean {
  if (typeof v !== 'boolean') throw badRequest(`payload.${key} must be true or false`);
  return v;
}

function oneOf(values: readonly string[]) {
  return (v: unknown, key: string) => {
    if (typeof v !== 'string' || !values.includes(v))
      throw badRequest(`payload.${key} must be one of ${values.join(', ')}`);
    return v;
  };
}

function targets(v: unknown, key: string): string {
  if (typeof v !== 'string' || v.split(',').every((t) => t.trim() === ''))
    throw badRequest('run_scan needs targets: no targets were specified');
  const list = v
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  const bad = list.find((t) => !TARGET.test(t));
  if (bad !== undefined) throw badRequest(`payload.${key} has an invalid target: ${JSON.stringify(bad.slice(0, 80))}`);
  return list.join(',');
}

function cron(v: unknown, key: string): string {
  const s = text(null, '')(v, key) as string;
  const fields = s.trim().split(/\s+/);
  if (fields.length < 5 || fields.length > 6 || !fields.every((f) => CRON_FIELD.test(f)))
    throw badRequest(`payload.${key} must be a cron expression of 5 or 6 fields`);
  return fields.join(' ');
}

/** push_config's value, by the rules of its key (checked first, so config_key is known to be allowlisted). */
function configValue(v: unknown, key: string, payload: Payload): string {
  const configKey = payload.config_key;
  if (!isRemoteConfigKey(configKey)) throw badRequest(`${CONFIG_KEY_NOT_ALLOWED}: ${String(configKey).slice(0, 64)}`);
  const result = checkRemoteConfigValue(configKey, v);
  if (!result.ok) throw badRequest(`payload.${key} ${result.reason}`);
  return result.value;
}

const RULES: Record<CommandType, Record<string, Rule>> = {
  run_scan: {
    targets: { required: true, check: targets },
    profile: { check: text(PROFILE, 'a profile name (letters, digits, _ and -, starting with a letter or digit)') },
    upload: { check: bool },
  },
  push_session: { session_id: { check: text(SESSION_NAME, 'a session name YYYYMMDD_HHMMSS') } },
  update_schedule: {
    schedule_id: { required: true, check: text(SCHEDULE_ID, 'a schedule id') },
    action: { check: oneOf(SCHEDULE_ACTIONS) },
    cron: { check: cron },
    profile: { check: text(PROFILE, 'a profile name (letters, digits, _ and -, starting with a letter or digit)') },
    targets: { check: targets },
  },
  push_config: {
    config_key: {
      required: true,
      check: (v) => {
        if (!isRemoteConfigKey(v)) throw badRequest(`${CONFIG_KEY_NOT_ALLOWED}: ${String(v).slice(0, 64)}`);
        return v;
      },
    },
    config_value: { required: true, check: configValue },
  },
  set_log_level: { level: { required: true, check: oneOf(AGENT_LOG_LEVELS) } },
  restart: {},
  shutdown: { graceful: { check: bool } },
  update: {
    branch: {
      check: (v, key) => {
        const s = text(BRANCH, 'a git branch name')(v, key) as string;
        if (s.includes('..') || s.endsWith('/') || s.endsWith('.lock'))
          throw badRequest(`payload.${key} must be a git branch name`);
        return s;
      },
    },
    version: { check: text(VERSION_TAG, 'a version tag vX.Y.Z') },
  },
};

/**
 * Check a command's payload against SPEC's payload table before it is queued: required
 * keys, allowed values, the push_config allowlist, no control characters, nothing that
 * could be read as an option. The agent checks again; this gives the admin a clear 400.
 * Returns the normalised payload.
 */
export function validatePayload(type: CommandType, payload: Payload): Payload {
  const rules = RULES[type];
  // Object.hasOwn, not `in`: `in` also finds Object.prototype members such as `constructor`.
  const unknown = Object.keys(payload).find((k) => !Object.hasOwn(rules, k));
  if (unknown !== undefined) throw badRequest(`Unknown payload key for ${type}: ${unknown.slice(0, 64)}`);
  const out: Payload = {};
  for (const [key, rule] of Object.entries(rules)) {
    const v = payload[key];
    if (v === undefined || v === null) {
      if (rule.required)
        throw type === 'run_scan' && key === 'targets'
          ? badRequest('run_scan needs targets: no targets were specified')
          : badRequest(`payload.${key} is required for ${type}`);
      continue;
    }
    out[key] = rule.check(v, key, payload);
  }
  return out;
}
