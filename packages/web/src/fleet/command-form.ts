import {
  AGENT_LOG_LEVELS,
  checkCommandPayload,
  COMMAND_TYPES,
  type CommandPayload,
  type CommandType,
  type CoverageBlock,
  describeRemoteConfigRule,
  isRemoteConfigKey,
  isScanPortList,
  type QueueCommandBody,
  REMOTE_CONFIG_ALLOWLIST,
  REMOTE_CONFIG_RULES,
  SCHEDULE_ACTIONS,
  type TargetView,
} from '@svc/protocol';

/**
 * The command queue form: one field list per command type (docs/agent/commands.md),
 * and the payload it builds, checked with the protocol's own rules (checkCommandPayload)
 * before anything is sent, so the form refuses exactly what the portal would.
 */

export type FieldKind = 'text' | 'select' | 'boolean';

export interface CommandField {
  key: string;
  label: string;
  kind: FieldKind;
  required: boolean;
  /** select: the choices; an empty first choice means "leave out" (the agent's default). */
  options?: readonly string[];
  hint?: string;
}

/** Form values as the inputs hold them: strings, and for `boolean` fields '' (default), 'true' or 'false'. */
export type FormValues = Record<string, string>;

const BOOLEAN_CHOICES = ['', 'true', 'false'] as const;

export const COMMAND_FIELDS: Readonly<Record<CommandType, readonly CommandField[]>> = {
  run_scan: [
    { key: 'targets', label: 'Targets', kind: 'text', required: true, hint: 'comma-separated hosts or CIDRs' },
    { key: 'profile', label: 'Profile', kind: 'text', required: false, hint: 'full_recon (default) or quick_recon' },
    {
      key: 'ports',
      label: 'Ports',
      kind: 'text',
      required: false,
      hint: "the profile's ports when empty; e.g. 22,80,8000-8100 or T:22,443,U:161",
    },
    { key: 'upload', label: 'Upload the session', kind: 'boolean', required: false, options: BOOLEAN_CHOICES },
  ],
  update_schedule: [
    { key: 'schedule_id', label: 'Schedule id', kind: 'text', required: true },
    { key: 'action', label: 'Action', kind: 'select', required: false, options: ['', ...SCHEDULE_ACTIONS] },
    { key: 'cron', label: 'Cron', kind: 'text', required: false, hint: '5 or 6 fields' },
    { key: 'profile', label: 'Profile', kind: 'text', required: false },
    { key: 'targets', label: 'Targets', kind: 'text', required: false, hint: 'comma-separated hosts or CIDRs' },
  ],
  push_config: [
    { key: 'config_key', label: 'Setting', kind: 'select', required: true, options: REMOTE_CONFIG_ALLOWLIST },
    { key: 'config_value', label: 'Value', kind: 'text', required: true },
  ],
  push_session: [
    { key: 'session_id', label: 'Session', kind: 'text', required: false, hint: 'YYYYMMDD_HHMMSS; latest when empty' },
  ],
  restart: [],
  shutdown: [{ key: 'graceful', label: 'Graceful', kind: 'boolean', required: false, options: BOOLEAN_CHOICES }],
  update: [
    { key: 'branch', label: 'Branch', kind: 'text', required: false, hint: 'main when empty' },
    { key: 'version', label: 'Version tag', kind: 'text', required: false, hint: 'vX.Y.Z; wins over the branch' },
  ],
  set_log_level: [{ key: 'level', label: 'Level', kind: 'select', required: true, options: AGENT_LOG_LEVELS }],
};

export function isCommandType(value: string): value is CommandType {
  return (COMMAND_TYPES as readonly string[]).includes(value);
}

/** What push_config's value must be for the chosen key, shown next to the input. */
export function configValueHint(key: string): string | null {
  return isRemoteConfigKey(key) ? `Value ${describeRemoteConfigRule(key)}` : null;
}

/** The choices of push_config's value when its key takes a fixed set (booleans, log level); null for free input. */
export function configValueChoices(key: string): readonly string[] | null {
  if (!isRemoteConfigKey(key)) return null;
  const rule = REMOTE_CONFIG_RULES[key];
  if (rule.kind === 'boolean') return ['true', 'false'];
  if (rule.kind === 'enum') return rule.values;
  return null;
}

/** The raw payload of a form: empty inputs are left out (the agent's default), booleans become booleans. */
export function payloadOf(type: CommandType, values: FormValues): CommandPayload {
  const payload: CommandPayload = {};
  for (const field of COMMAND_FIELDS[type]) {
    const raw = values[field.key] ?? '';
    if (raw.trim() === '') continue;
    payload[field.key] = field.kind === 'boolean' ? raw === 'true' : raw;
  }
  return payload;
}

export type Target =
  | { kind: 'agent'; agent_id: string; client_id?: string | null | undefined }
  | { kind: 'group'; group_name: string; client_id?: string | null | undefined; all_clients?: boolean };

export type QueueDraft = { ok: true; body: QueueCommandBody } | { ok: false; message: string };

/**
 * The POST /api/agent-commands body of a filled form, or the first reason it would be
 * refused: the target, the priority (integer 0-10) and the payload by the protocol's rules.
 * The body carries the normalised payload checkCommandPayload returns.
 */
export function draftQueueBody(type: string, target: Target, values: FormValues, priority: string): QueueDraft {
  if (!isCommandType(type)) return { ok: false, message: `Unknown command type: ${type}` };
  const body: QueueCommandBody = { command_type: type };
  if (target.kind === 'agent') {
    if (target.agent_id.trim() === '') return { ok: false, message: 'Choose an agent' };
    body.agent_id = target.agent_id.trim();
  } else {
    if (target.group_name.trim() === '') return { ok: false, message: 'Choose a group' };
    body.group_target = target.group_name.trim();
    if (target.all_clients) body.all_clients = true;
  }
  if (target.client_id !== undefined && !(target.kind === 'group' && target.all_clients))
    body.client_id = target.client_id;
  if (priority.trim() !== '') {
    if (!/^\d{1,2}$/.test(priority.trim()) || Number(priority) > 10)
      return { ok: false, message: 'Priority must be an integer from 0 to 10' };
    body.priority = Number(priority);
  }
  const checked = checkCommandPayload(type, payloadOf(type, values));
  if (!checked.ok) return { ok: false, message: checked.message };
  body.payload = checked.payload;
  return { ok: true, body };
}

/** The items of a target list, as compared: trimmed, lower-cased, without empty ones. */
const itemsOf = (targets: string) =>
  targets
    .split(/[,\s]+/)
    .map((t) => t.trim().toLowerCase())
    .filter((t) => t !== '');

/**
 * The known targets (GET /api/targets) the typed run_scan targets name: the one whose list is
 * the same (in any order and case) first, then those sharing an address or range with it.
 */
export function matchingTargets(typed: string, known: readonly TargetView[]): TargetView[] {
  const want = new Set(itemsOf(typed));
  if (want.size === 0) return [];
  const same = (t: TargetView) => {
    const have = new Set(itemsOf(t.target));
    return have.size === want.size && [...have].every((x) => want.has(x));
  };
  const exact = known.filter(same);
  const overlapping = known.filter((t) => !same(t) && itemsOf(t.target).some((x) => want.has(x)));
  return [...exact, ...overlapping];
}

/**
 * The known targets run_scan can take as they are (a host, an address or a range, not an
 * import's name), most recently scanned first: what the form offers for the chosen agent's
 * client before any target is typed.
 */
export function recentTargets(known: readonly TargetView[]): TargetView[] {
  return known
    .filter((t) => checkCommandPayload('run_scan', { targets: t.target }).ok)
    .sort((a, b) => (b.last_scanned_at ?? '').localeCompare(a.last_scanned_at ?? ''));
}

/**
 * The ports a target's latest scan covered, as run_scan's `ports` ("T:1-1024,3389,U:161"),
 * or null when it states none or the list is not one the scan port rule accepts (too long).
 */
export function usualPortsOf(coverage: CoverageBlock | null): string | null {
  if (coverage === null) return null;
  const tcp = coverage.ports['tcp'];
  const udp = coverage.ports['udp'];
  const parts = [
    typeof tcp === 'string' && tcp !== '' ? `T:${tcp}` : null,
    typeof udp === 'string' && udp !== '' ? `U:${udp}` : null,
  ].filter((p) => p !== null);
  const ports = parts.join(',');
  return ports !== '' && isScanPortList(ports) ? ports : null;
}

/** The profile of a target's latest scan when run_scan would take it (a scanner profile, not an import's name). */
export function usualProfileOf(coverage: CoverageBlock | null): string | null {
  const profile = coverage?.profile;
  if (profile === undefined || profile === '') return null;
  return checkCommandPayload('run_scan', { targets: '127.0.0.1', profile }).ok ? profile : null;
}
