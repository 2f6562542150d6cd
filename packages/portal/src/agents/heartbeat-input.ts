import { AGENT_ID_PATTERN, HEARTBEAT_REQUIRED_FIELDS, type HeartbeatBody } from '@svc/protocol';
import { badRequest } from '../http/errors.ts';

export interface HeartbeatInput {
  agentId: string;
  version: string;
  sentAt: Date;
  status: string;
  uptimeSeconds: number;
  /** The client_id the daemon reports; used only for the legacy key (a license key's own client_id wins). */
  clientId: string | null;
  schedules: unknown[] | null;
  systemInfo: Record<string, unknown> | null;
}

const AGENT_ID = new RegExp(AGENT_ID_PATTERN);
const CLIENT_ID = /^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}$/;
const MAX_JSON_CHARS = 64 * 1024;
const MAX_JSON_DEPTH = 32;
// PostgreSQL text cannot hold NUL, and version/status are single-line display values.
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Why a telemetry value cannot be stored as jsonb, or null when it can: PostgreSQL's jsonb
 * refuses `\u0000` in any string or key (the insert would fail with a 500), and very deep
 * nesting is not telemetry. Iterative, so hostile nesting cannot overflow the stack.
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

const invalid = (field: string, rule: string) => badRequest(`Invalid field: ${field} ${rule}`);

const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * An ISO 8601 date-time, strictly: `new Date()` alone would roll 2025-02-30 over to March
 * and read a time without an offset in the server's time zone. Without an offset the
 * daemon's time is taken as UTC, so the stored value never depends on where the portal runs.
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

/**
 * SPEC: the five required fields are checked in the order agent_id, version, timestamp,
 * status, uptime_seconds; the first that is missing, null or an empty string is named
 * (`Missing required field: <name>`); the number 0 passes. Types are checked after that.
 * `keepClientId`: the caller holds the legacy key, whose agents keep the client_id they report.
 */
export function parseHeartbeat(
  body: HeartbeatBody | null | undefined,
  opts: { keepClientId: boolean } = { keepClientId: true },
): HeartbeatInput {
  const b = (body ?? {}) as Record<string, unknown>;
  for (const field of HEARTBEAT_REQUIRED_FIELDS) {
    const v = b[field];
    if (v === undefined || v === null || (typeof v === 'string' && v.trim() === ''))
      throw badRequest(`Missing required field: ${field}`);
  }
  const { agent_id, version, timestamp, status, uptime_seconds } = b;
  if (typeof agent_id !== 'string' || !AGENT_ID.test(agent_id))
    throw invalid('agent_id', `must match ${AGENT_ID_PATTERN}`);
  if (typeof version !== 'string' || version.length > 64 || CONTROL.test(version))
    throw invalid('version', 'must be a single-line string of at most 64 characters');
  const sentAt = parseTimestamp(timestamp);
  if (sentAt === null) throw invalid('timestamp', 'must be an ISO 8601 date-time');
  if (typeof status !== 'string' || status.length > 32 || CONTROL.test(status))
    throw invalid('status', 'must be a single-line string of at most 32 characters');
  if (typeof uptime_seconds !== 'number' || !Number.isFinite(uptime_seconds) || uptime_seconds < 0)
    throw invalid('uptime_seconds', 'must be a non-negative number');

  // Only the legacy key keeps the reported client_id; a license key's client wins, so the
  // field is ignored there, never a reason to refuse the heartbeat.
  let clientId: string | null = null;
  if (opts.keepClientId && b['client_id'] !== undefined && b['client_id'] !== null && b['client_id'] !== '') {
    if (typeof b['client_id'] !== 'string' || !CLIENT_ID.test(b['client_id']))
      throw invalid('client_id', 'must be a client identifier');
    clientId = b['client_id'];
  }
  const schedules = b['schedules'] ?? null;
  if (schedules !== null && !Array.isArray(schedules)) throw invalid('schedules', 'must be an array');
  const systemInfo = b['system_info'] ?? null;
  if (systemInfo !== null && (typeof systemInfo !== 'object' || Array.isArray(systemInfo)))
    throw invalid('system_info', 'must be an object');
  for (const [field, value] of [
    ['schedules', schedules],
    ['system_info', systemInfo],
  ] as const) {
    const problem = jsonProblem(value);
    if (problem !== null) throw invalid(field, problem);
    if (JSON.stringify(value).length > MAX_JSON_CHARS) throw invalid(field, 'is too large');
  }

  return {
    agentId: agent_id,
    version,
    sentAt,
    status,
    uptimeSeconds: uptime_seconds,
    clientId,
    schedules: schedules as unknown[] | null,
    systemInfo: systemInfo as Record<string, unknown> | null,
  };
}
