import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { HeartbeatBody, readHeartbeat, type HeartbeatReading } from '../src/heartbeat.ts';

/** docs/api.md#agents-and-commands: how a heartbeat body is read, and the shape a daemon sends. */

const beat = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  agent_id: 'svcd_0a1b2c3d',
  version: '4.2.3',
  timestamp: '2025-06-01T12:00:00Z',
  status: 'running',
  uptime_seconds: 120,
  ...extra,
});

function message(reading: HeartbeatReading): string {
  if (reading.ok) throw new Error('the heartbeat was accepted');
  return reading.message;
}

describe('readHeartbeat', () => {
  it('reads a full heartbeat, telemetry as reported', () => {
    const schedules = [{ config: 'a.conf', anything: [1, 2] }, 'odd item'];
    const systemInfo = { hostname: 'h1', disks: [{ mount: '/' }] };
    expect(readHeartbeat(beat({ schedules, system_info: systemInfo, client_id: 'acme' }))).toEqual({
      ok: true,
      heartbeat: {
        agentId: 'svcd_0a1b2c3d',
        version: '4.2.3',
        sentAt: new Date('2025-06-01T12:00:00.000Z'),
        status: 'running',
        uptimeSeconds: 120,
        clientId: 'acme',
        schedules,
        systemInfo,
        portalSchedulesRevision: null,
      },
    });
  });

  it('reads the portal schedules revision an agent holds: a non-negative integer, else a 400 naming it', () => {
    const held = readHeartbeat(beat({ portal_schedules_revision: 12 }));
    expect(held.ok && held.heartbeat.portalSchedulesRevision).toBe(12);
    for (const bad of [-1, 1.5, '3', Number.MAX_SAFE_INTEGER + 2])
      expect(message(readHeartbeat(beat({ portal_schedules_revision: bad })))).toBe(
        'Invalid field: portal_schedules_revision must be a non-negative integer',
      );
  });

  it('ignores the reported client_id, even a malformed one, unless asked to keep it', () => {
    const reading = readHeartbeat(beat({ client_id: '../other' }), { keepClientId: false });
    expect(reading.ok && reading.heartbeat.clientId).toBeNull();
    expect(message(readHeartbeat(beat({ client_id: '../other' })))).toBe(
      'Invalid field: client_id must be a client identifier',
    );
  });

  it('names the first missing required field in the documented order; the number 0 passes', () => {
    expect(message(readHeartbeat(null))).toBe('Missing required field: agent_id');
    expect(message(readHeartbeat({ agent_id: 'a', version: ' ' }))).toBe('Missing required field: version');
    expect(message(readHeartbeat(beat({ status: null, uptime_seconds: undefined })))).toBe(
      'Missing required field: status',
    );
    expect(readHeartbeat(beat({ uptime_seconds: 0 })).ok).toBe(true);
  });

  it.each([
    ['agent_id', '-svcd', 'must match ^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$'],
    ['version', '4.2\n3', 'must be a single-line string of at most 64 characters'],
    ['timestamp', '2025-02-30T00:00:00Z', 'must be an ISO 8601 date-time'],
    ['timestamp', '2025-06-01 12:00:00Z', 'must be an ISO 8601 date-time'],
    ['status', 's'.repeat(33), 'must be a single-line string of at most 32 characters'],
    ['uptime_seconds', '12', 'must be a non-negative number'],
    ['schedules', { a: 1 }, 'must be an array'],
    ['schedules', [{ config: 'nul\u0000.conf' }], 'must not contain NUL characters'],
    ['system_info', ['x'], 'must be an object'],
    ['system_info', { blob: 'x'.repeat(70_000) }, 'is too large'],
  ])('%s = %j is "Invalid field: %s %s"', (field, value, rule) => {
    expect(message(readHeartbeat(beat({ [field]: value })))).toBe(`Invalid field: ${field} ${rule}`);
  });

  it('reads a time without an offset as UTC', () => {
    const reading = readHeartbeat(beat({ timestamp: '2025-06-01T12:00:00' }));
    expect(reading.ok && reading.heartbeat.sentAt.toISOString()).toBe('2025-06-01T12:00:00.000Z');
  });
});

describe('HeartbeatBody: what a daemon sends is what the portal reads', () => {
  // What a standard validator's date-time format checks beyond the pattern: the calendar date exists.
  const realDate = (s: string): boolean => {
    const [y = 0, m = 0, d = 0] = s.slice(0, 10).split('-').map(Number);
    const t = new Date(Date.UTC(y, m - 1, d));
    return t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d;
  };
  const ajv = new Ajv({ strict: false }).addFormat('date-time', realDate);
  const validate = ajv.compile(HeartbeatBody);
  const schedule = {
    config: 'nightly.conf',
    schedule_id: 'sched_0123456789ab',
    last_run: null,
    last_status: 'none',
    next_run: '2025-06-02T03:00:00Z',
    retry_count: 0,
  };

  it.each([
    ['the required fields only', beat()],
    ['every field', beat({ client_id: 'acme', schedules: [schedule], system_info: { os: 'Debian 12', cpu_count: 4 } })],
    ['an offset and fractions', beat({ timestamp: '2025-06-01T12:00:00.123456+05:30', uptime_seconds: 0 })],
  ])('%s: the schema and the reader both accept it', (_label, body) => {
    expect(validate(body)).toBe(true);
    expect(readHeartbeat(body).ok).toBe(true);
  });

  it.each([
    ['a blank version', beat({ version: '  ' })],
    ['a two-line status', beat({ status: 'run\nning' })],
    ['a date that does not exist', beat({ timestamp: '2025-02-30T00:00:00Z' })],
    ['a space for T', beat({ timestamp: '2025-06-01 12:00:00Z' })],
    ['a negative uptime', beat({ uptime_seconds: -1 })],
    ['a bad client_id', beat({ client_id: '../other' })],
    ['schedules that are not an array', beat({ schedules: { a: 1 } })],
    ['system_info that is an array', beat({ system_info: ['x'] })],
  ])('%s: the reader refuses it, and the schema does too', (_label, body) => {
    expect(readHeartbeat(body).ok).toBe(false);
    expect(validate(body)).toBe(false);
  });

  it('a schedule item off the documented shape is outside the schema, yet the reader stores it', () => {
    const body = beat({ schedules: [{ ...schedule, last_status: 'maybe' }] });
    expect(validate(body)).toBe(false);
    expect(readHeartbeat(body).ok).toBe(true);
  });
});
