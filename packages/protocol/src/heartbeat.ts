import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { AGENT_ID_PATTERN, AgentId } from './agents.ts';
import { ClientId, IsoDateTime } from './common.ts';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/**
 * The daemon heartbeat (POST /api/health), docs/api.md#agents-and-commands
 *. `HeartbeatBody` is what a daemon sends; `readHeartbeat` is how the
 * portal reads a body, one pure function so a sender can check itself against the reader.
 */

/** Validated in this order; the first missing, null or empty one is named in the 400. */
export const HEARTBEAT_REQUIRED_FIELDS = ['agent_id', 'version', 'timestamp', 'status', 'uptime_seconds'] as const;

export const SCHEDULE_LAST_STATUSES = ['none', 'success', 'failed'] as const;

/** One of the daemon's schedules as it reports it. */
export const HeartbeatSchedule = Type.Object(
  {
    config: Type.String({ description: 'The schedule config file name' }),
    schedule_id: Type.String(),
    last_run: Nullable(IsoDateTime),
    last_status: Type.Union(SCHEDULE_LAST_STATUSES.map((s) => Type.Literal(s))),
    next_run: IsoDateTime,
    retry_count: Type.Integer({ minimum: 0, description: 'Consecutive failures' }),
    source: Type.Optional(
      Type.Union([Type.Literal('local'), Type.Literal('portal')], {
        description: '`local`: a config file of the agent; `portal`: kept by the portal (config is then `portal`)',
      }),
    ),
  },
  { additionalProperties: true },
);
export type HeartbeatSchedule = Static<typeof HeartbeatSchedule>;

/** Optional host telemetry (absent on older daemons); stored as JSON, other keys are kept too. */
export const HeartbeatSystemInfo = Type.Object(
  {
    hostname: Type.Optional(Type.String()),
    os: Type.Optional(Type.String()),
    kernel: Type.Optional(Type.String()),
    cpu_count: Type.Optional(Type.Integer({ minimum: 0 })),
    memory_total_mb: Type.Optional(Type.Number({ minimum: 0 })),
    memory_available_mb: Type.Optional(Type.Number({ minimum: 0 })),
    nmap_version: Type.Optional(Type.String()),
    agent_version: Type.Optional(Type.String()),
    ip_addresses: Type.Optional(
      Type.Array(Type.String(), { description: "The host's non-loopback addresses, IPv4 first" }),
    ),
  },
  { additionalProperties: true },
);
export type HeartbeatSystemInfo = Static<typeof HeartbeatSystemInfo>;

// One line, not blank: what readHeartbeat takes for version and status.
const ONE_LINE = '^(?=.*\\S)[^\\u0000-\\u001f\\u007f]*$';
/** RFC 3339 with `T`, seconds and an offset: the form readHeartbeat reads the same everywhere. */
const SEND_TIME = '^\\d{4}-\\d{2}-\\d{2}T([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(\\.\\d{1,9})?(Z|[+-]\\d{2}:\\d{2})$';

/** The heartbeat a daemon sends: every value here is one `readHeartbeat` accepts. */
export const HeartbeatBody = Type.Object({
  agent_id: AgentId,
  version: Type.String({ maxLength: 64, pattern: ONE_LINE, description: 'Tool version' }),
  timestamp: Type.String({ format: 'date-time', pattern: SEND_TIME, description: 'Send time, ISO 8601' }),
  status: Type.String({ maxLength: 32, pattern: ONE_LINE, description: '`running`' }),
  uptime_seconds: Type.Number({ minimum: 0, description: 'Seconds since daemon start (the debug tool sends 0)' }),
  client_id: Type.Optional(ClientId),
  schedules: Type.Optional(Type.Array(HeartbeatSchedule)),
  system_info: Type.Optional(HeartbeatSystemInfo),
  portal_schedules_revision: Type.Optional(
    Type.Integer({
      minimum: 0,
      description:
        "The revision of the portal's schedules the agent holds (0: none yet); a different one brings `portal_schedules` in the answer",
    }),
  ),
});
export type HeartbeatBody = Static<typeof HeartbeatBody>;

/**
 * POST /api/health's request schema: every field unchecked, because `readHeartbeat` checks
 * them by hand to give the exact messages in the order, and an odd telemetry value
 * is stored as reported rather than refused.
 */
export const HeartbeatRequestBody = Type.Object(
  {
    agent_id: Type.Optional(Type.Unknown()),
    version: Type.Optional(Type.Unknown()),
    timestamp: Type.Optional(Type.Unknown()),
    status: Type.Optional(Type.Unknown()),
    uptime_seconds: Type.Optional(Type.Unknown()),
    client_id: Type.Optional(Type.Unknown()),
    schedules: Type.Optional(Type.Unknown()),
    system_info: Type.Optional(Type.Unknown()),
    portal_schedules_revision: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: true },
);
export type HeartbeatRequestBody = Static<typeof HeartbeatRequestBody>;

/** A heartbeat as the portal reads it. */
export interface ReceivedHeartbeat {
  agentId: string;
  version: string;
  sentAt: Date;
  status: string;
  uptimeSeconds: number;
  /** The client_id the daemon reports; kept only when the reader asks (the legacy key). */
  clientId: string | null;
  /**
   * Telemetry as reported: only its outer shape (an array, an object), storability and size
   * are checked, so items need not follow HeartbeatSchedule / HeartbeatSystemInfo.
   */
  schedules: unknown[] | null;
  systemInfo: Record<string, unknown> | null;
  /** The portal schedules' revision the agent holds; null from an agent that does not know them. */
  portalSchedulesRevision: number | null;
}

export type HeartbeatReading = { ok: true; heartbeat: ReceivedHeartbeat } | { ok: false; message: string };

const AGENT_ID = new RegExp(AGENT_ID_PATTERN);
const CLIENT_ID = /^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}$/;
const MAX_JSON_CHARS = 64 * 1024;
const MAX_JSON_DEPTH = 32;
// PostgreSQL text cannot hold NUL, and version/status are single-line display values.
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Why a telemetry value cannot be stored as jsonb, or null when it can: PostgreSQL's jsonb
 * refuses `\u0000` in any string or key, and very deep nesting is not telemetry. Iterative,
 * so hostile nesting cannot overflow the stack.
 */
function jsonProblem(value: unknown): string | null {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return 'must not contain NUL characters';
    } else if (v !== null && typeof v === 'object') {
      if (depth >= MAX_JSON_DEPTH) return 'is nested too deeply';
      for (const [k, child] of Object.entries(v)) {
        if (k.includes('\u0000')) return 'must not contain NUL characters';
        stack.push([child, depth + 1]);
      }
    }
  }
  return null;
}

const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * An ISO 8601 date-time, strictly: `new Date()` alone would roll 2025-02-30 over to March
 * and read a time without an offset in the local time zone. Without an offset the daemon's
 * time is taken as UTC, so the value never depends on where the reader runs.
 */
function parseTimestamp(value: unknown): Date | null {
  if (typeof value !== 'string') return null;
  const m = ISO_DATE_TIME.exec(value);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '0'].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const daysInMonth = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  if (daysInMonth === undefined || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 59) return null;
  const normal = value.replace(',', '.');
  const date = new Date(m[7] === undefined ? `${normal}Z` : normal);
  return Number.isNaN(date.getTime()) ? null : date;
}

const invalid = (field: string, rule: string): HeartbeatReading => ({
  ok: false,
  message: `Invalid field: ${field} ${rule}`,
});

/**
 * The five required fields are checked in the order agent_id, version, timestamp,
 * status, uptime_seconds; the first that is missing, null or an empty string is named
 * (`Missing required field: <name>`); the number 0 passes. Types are checked after that.
 * `keepClientId`: the reader holds the legacy key, whose agents keep the client_id they
 * report; otherwise the field is ignored, never a reason to refuse the heartbeat.
 */
export function readHeartbeat(
  body: unknown,
  opts: { keepClientId: boolean } = { keepClientId: true },
): HeartbeatReading {
  const b = (body ?? {}) as Record<string, unknown>;
  for (const field of HEARTBEAT_REQUIRED_FIELDS) {
    const v = b[field];
    if (v === undefined || v === null || (typeof v === 'string' && v.trim() === ''))
      return { ok: false, message: `Missing required field: ${field}` };
  }
  const { agent_id, version, timestamp, status, uptime_seconds } = b;
  if (typeof agent_id !== 'string' || !AGENT_ID.test(agent_id))
    return invalid('agent_id', `must match ${AGENT_ID_PATTERN}`);
  if (typeof version !== 'string' || version.length > 64 || CONTROL.test(version))
    return invalid('version', 'must be a single-line string of at most 64 characters');
  const sentAt = parseTimestamp(timestamp);
  if (sentAt === null) return invalid('timestamp', 'must be an ISO 8601 date-time');
  if (typeof status !== 'string' || status.length > 32 || CONTROL.test(status))
    return invalid('status', 'must be a single-line string of at most 32 characters');
  if (typeof uptime_seconds !== 'number' || !Number.isFinite(uptime_seconds) || uptime_seconds < 0)
    return invalid('uptime_seconds', 'must be a non-negative number');

  let clientId: string | null = null;
  const reported = b['client_id'];
  if (opts.keepClientId && reported !== undefined && reported !== null && reported !== '') {
    if (typeof reported !== 'string' || !CLIENT_ID.test(reported))
      return invalid('client_id', 'must be a client identifier');
    clientId = reported;
  }
  const schedules = b['schedules'] ?? null;
  if (schedules !== null && !Array.isArray(schedules)) return invalid('schedules', 'must be an array');
  const systemInfo = b['system_info'] ?? null;
  if (systemInfo !== null && (typeof systemInfo !== 'object' || Array.isArray(systemInfo)))
    return invalid('system_info', 'must be an object');
  const revision = b['portal_schedules_revision'] ?? null;
  if (revision !== null && !(typeof revision === 'number' && Number.isSafeInteger(revision) && revision >= 0))
    return invalid('portal_schedules_revision', 'must be a non-negative integer');
  for (const [field, value] of [
    ['schedules', schedules],
    ['system_info', systemInfo],
  ] as const) {
    const problem = jsonProblem(value);
    if (problem !== null) return invalid(field, problem);
    if (JSON.stringify(value).length > MAX_JSON_CHARS) return invalid(field, 'is too large');
  }

  return {
    ok: true,
    heartbeat: {
      agentId: agent_id,
      version,
      sentAt,
      status,
      uptimeSeconds: uptime_seconds,
      clientId,
      schedules: schedules as unknown[] | null,
      systemInfo: systemInfo as Record<string, unknown> | null,
      portalSchedulesRevision: revision,
    },
  };
}
