import { AGENT_LOG_LEVELS, CONFIG_KEY_NOT_ALLOWED, SCHEDULE_ACTIONS, type CommandType } from './agents.ts';
import { checkRemoteConfigValue, isRemoteConfigKey, type RemoteConfigKey } from './remote-config.ts';
import { isScanPortList, PORT_LIST_RULE } from './scan-ports.ts';
import { checkScanTargets, DEFAULT_SCAN_MAX_ADDRESSES, NO_SCAN_TARGETS, type ScanBudget } from './scan-targets.ts';

/**
 * docs/agent/commands.md: the rules a command's payload must follow, shared by the
 * portal (which refuses a bad command before queueing it) and the agent (which checks again
 * before running it). Pure: a refusal is returned with its message, never thrown.
 */

export type CommandPayload = Record<string, unknown>;

/** An accepted payload per command type, as checkCommandPayload returns it (the payload table). */
export type CommandPayloads = {
  run_scan: { targets: string; profile?: string; ports?: string; upload?: boolean };
  push_session: { session_id?: string };
  update_schedule: {
    schedule_id: string;
    action?: (typeof SCHEDULE_ACTIONS)[number];
    cron?: string;
    profile?: string;
    targets?: string;
  };
  /** config_value in its string form, as the agent writes it. */
  push_config: { config_key: RemoteConfigKey; config_value: string };
  set_log_level: { level: (typeof AGENT_LOG_LEVELS)[number] };
  restart: Record<string, never>;
  shutdown: { graceful?: boolean };
  update: { branch?: string; version?: string };
};

export type CommandPayloadCheck<T extends CommandType = CommandType> =
  /** `unknown`: keys this version does not know, as given (the portal stores and delivers them, an agent ignores them). */
  { ok: true; payload: CommandPayloads[T]; unknown: Record<string, unknown> } | { ok: false; message: string };

/** What the checking side configures: the scan address budget (the portal's or the agent's SVC_SCAN_MAX_ADDRESSES). */
export interface CommandPayloadOptions {
  scanBudget?: ScanBudget | undefined;
}

type Checked = { ok: true; value: unknown } | { ok: false; message: string };
type Rule = {
  required?: boolean;
  check: (value: unknown, key: string, payload: CommandPayload, opts: CommandPayloadOptions) => Checked;
};

const accept = (value: unknown): Checked => ({ ok: true, value });
const refuse = (message: string): Checked => ({ ok: false, message });

// Control characters (including CR and LF) never reach an agent's config or command line.
const CONTROL = /[\u0000-\u001f\u007f]/;
// Both start with a letter or digit: docs/api.md, no value starting with `-` may reach the agent's tools as an option.
const PROFILE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const SCHEDULE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const SESSION_NAME_PATTERN = /^\d{8}_\d{6}$/;
const CRON_FIELD = /^[0-9A-Za-z*/,?#LW-]+$/;
/** A git branch name that git cannot read as an option or a path escape. */
/** A key this version does not know must still be a plain name (no `__proto__`, no option-like text). */
const UNKNOWN_KEY_PATTERN = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
const BRANCH_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$/;
const VERSION_TAG_PATTERN = /^v\d+\.\d+\.\d+$/;

const NO_TARGETS = `run_scan needs targets: ${NO_SCAN_TARGETS}`;
const PROFILE_RULE = 'a profile name (letters, digits, _ and -, starting with a letter or digit)';

function text(pattern: RegExp | null, what: string) {
  return (v: unknown, key: string): Checked => {
    if (typeof v !== 'string' || v.trim() === '') return refuse(`payload.${key} must be a non-empty string`);
    if (CONTROL.test(v)) return refuse(`payload.${key} must not contain control characters`);
    if (pattern && !pattern.test(v)) return refuse(`payload.${key} must be ${what}`);
    return accept(v);
  };
}

/** run_scan's `ports`: only the scan port syntax reaches `svc scan --ports` (scan-ports.ts). */
function ports(v: unknown, key: string): Checked {
  return typeof v === 'string' && isScanPortList(v) ? accept(v) : refuse(`payload.${key} must be ${PORT_LIST_RULE}`);
}

function bool(v: unknown, key: string): Checked {
  return typeof v === 'boolean' ? accept(v) : refuse(`payload.${key} must be true or false`);
}

function oneOf(values: readonly string[]) {
  return (v: unknown, key: string): Checked =>
    typeof v === 'string' && values.includes(v)
      ? accept(v)
      : refuse(`payload.${key} must be one of ${values.join(', ')}`);
}

/** The protocol's one target rule (scan-targets.ts); its message is the same on the portal, svcd and svc. */
function targets(v: unknown, _key: string, _payload: CommandPayload, opts: CommandPayloadOptions): Checked {
  if (typeof v !== 'string' || v.split(',').every((t) => t.trim() === '')) return refuse(NO_TARGETS);
  const checked = checkScanTargets(v, opts.scanBudget ?? { maxAddresses: DEFAULT_SCAN_MAX_ADDRESSES });
  return checked.ok ? accept(checked.list) : refuse(checked.message);
}

function cron(v: unknown, key: string): Checked {
  const checked = text(null, '')(v, key);
  if (!checked.ok) return checked;
  const fields = (checked.value as string).trim().split(/\s+/);
  if (fields.length < 5 || fields.length > 6 || !fields.every((f) => CRON_FIELD.test(f)))
    return refuse(`payload.${key} must be a cron expression of 5 or 6 fields`);
  return accept(fields.join(' '));
}

function branch(v: unknown, key: string): Checked {
  const checked = text(BRANCH_PATTERN, 'a git branch name')(v, key);
  if (!checked.ok) return checked;
  const s = checked.value as string;
  if (s.includes('..') || s.endsWith('/') || s.endsWith('.lock'))
    return refuse(`payload.${key} must be a git branch name`);
  return checked;
}

const configKeyRefused = (key: unknown) => refuse(`${CONFIG_KEY_NOT_ALLOWED}: ${String(key).slice(0, 64)}`);

function configKey(v: unknown): Checked {
  return isRemoteConfigKey(v) ? accept(v) : configKeyRefused(v);
}

/** push_config's value, by the rules of its key (checked first, so config_key is known to be allowlisted). */
function configValue(v: unknown, key: string, payload: CommandPayload): Checked {
  const name = payload['config_key'];
  if (!isRemoteConfigKey(name)) return configKeyRefused(name);
  const result = checkRemoteConfigValue(name, v);
  return result.ok ? accept(result.value) : refuse(`payload.${key} ${result.reason}`);
}

const RULES: Record<CommandType, Record<string, Rule>> = {
  run_scan: {
    targets: { required: true, check: targets },
    profile: { check: text(PROFILE_PATTERN, PROFILE_RULE) },
    ports: { check: ports },
    upload: { check: bool },
  },
  push_session: { session_id: { check: text(SESSION_NAME_PATTERN, 'a session name YYYYMMDD_HHMMSS') } },
  update_schedule: {
    schedule_id: { required: true, check: text(SCHEDULE_ID_PATTERN, 'a schedule id') },
    action: { check: oneOf(SCHEDULE_ACTIONS) },
    cron: { check: cron },
    profile: { check: text(PROFILE_PATTERN, PROFILE_RULE) },
    targets: { check: targets },
  },
  push_config: {
    config_key: { required: true, check: configKey },
    config_value: { required: true, check: configValue },
  },
  set_log_level: { level: { required: true, check: oneOf(AGENT_LOG_LEVELS) } },
  restart: {},
  shutdown: { graceful: { check: bool } },
  update: {
    branch: { check: branch },
    version: { check: text(VERSION_TAG_PATTERN, 'a version tag vX.Y.Z') },
  },
};

/**
 * Check a command's payload against the payload table: required keys, allowed values,
 * the push_config allowlist and value rules, no control characters, nothing that could be
 * read as an option, targets by the scan target rule within `opts.scanBudget` (default one
 * /16). A key of no rule is accepted when it is a plain name and returned apart, unchecked. Keys are checked in the table's order and the first refusal is the answer. Null counts as absent. Accepted payloads come back normalised (trimmed target
 * lists, single-spaced cron, push_config values in their string form).
 */
export function checkCommandPayload<T extends CommandType>(
  type: T,
  payload: CommandPayload,
  opts: CommandPayloadOptions = {},
): CommandPayloadCheck<T> {
  const rules = RULES[type];
  // Object.hasOwn, not `in`: `in` also finds Object.prototype members such as `constructor`.
  const unknownKeys = Object.keys(payload).filter((k) => !Object.hasOwn(rules, k));
  const badName = unknownKeys.find((k) => !UNKNOWN_KEY_PATTERN.test(k));
  if (badName !== undefined)
    return {
      ok: false,
      message: `Unknown payload key for ${type} must be a name (letters, digits and _, starting with a letter, at most 64): ${badName.slice(0, 64)}`,
    };
  // The rollout rule: a field the portal accepts first reaches agents that do not know it yet.
  const unknown = Object.fromEntries(unknownKeys.map((k) => [k, payload[k]]));
  const out: CommandPayload = {};
  for (const [key, rule] of Object.entries(rules)) {
    const v = payload[key];
    if (v === undefined || v === null) {
      if (rule.required)
        return {
          ok: false,
          message: type === 'run_scan' && key === 'targets' ? NO_TARGETS : `payload.${key} is required for ${type}`,
        };
      continue;
    }
    const checked = rule.check(v, key, payload, opts);
    if (!checked.ok) return checked;
    out[key] = checked.value;
  }
  // The rules above produce exactly the keys and value types of CommandPayloads[T].
  return { ok: true, payload: out as CommandPayloads[T], unknown };
}
