import { type AuditEvent, sessionHref, type TargetView } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import {
  agentState,
  fleetFiltersOf,
  fleetHref,
  fleetQuery,
  NO_FILTERS,
  scheduleRows,
  systemInfoRows,
} from '../src/fleet/agent-view.ts';
import {
  COMMAND_FIELDS,
  configValueChoices,
  configValueHint,
  draftQueueBody,
  payloadOf,
  recentTargets,
} from '../src/fleet/command-form.ts';
import { deregisteredAgents } from '../src/fleet/deregistered.ts';
import { commandElapsed, commandTarget, needsPolling } from '../src/fleet/command-status.ts';
import { formatAge, formatDuration } from '../src/ui/format.ts';

const agent = { kind: 'agent' as const, agent_id: 'svcd_0a1b2c3d' };

describe('command queue form', () => {
  it('builds a run_scan body with the normalised payload the protocol accepts', () => {
    const draft = draftQueueBody('run_scan', agent, { targets: ' 10.0.0.1 , host.example ', upload: 'true' }, '7');
    expect(draft).toEqual({
      ok: true,
      body: {
        command_type: 'run_scan',
        agent_id: 'svcd_0a1b2c3d',
        priority: 7,
        payload: { targets: '10.0.0.1,host.example', upload: true },
      },
    });
  });

  it('refuses run_scan without targets with the protocol message', () => {
    expect(draftQueueBody('run_scan', agent, { targets: ' ' }, '')).toEqual({
      ok: false,
      message: 'run_scan needs targets: no targets were specified',
    });
  });

  it('refuses a target that could be read as an option', () => {
    expect(draftQueueBody('run_scan', agent, { targets: '-oN /tmp/x' }, '')).toEqual({
      ok: false,
      message: 'invalid target "-oN /tmp/x": starts with "-" (a scanner would read it as an option)',
    });
  });

  it('checks push_config values by the allowlisted key rules', () => {
    expect(
      draftQueueBody('push_config', agent, { config_key: 'ALERT_RISK_THRESHOLD', config_value: '101' }, ''),
    ).toEqual({ ok: false, message: 'payload.config_value must be an integer from 0 to 100 for ALERT_RISK_THRESHOLD' });
    expect(draftQueueBody('push_config', agent, { config_key: 'PATH', config_value: '/x' }, '')).toEqual({
      ok: false,
      message: 'Config key not in remote-update allowlist: PATH',
    });
    const ok = draftQueueBody('push_config', agent, { config_key: 'ALERT_ENABLED', config_value: 'false' }, '');
    expect(ok).toEqual({
      ok: true,
      body: {
        command_type: 'push_config',
        agent_id: 'svcd_0a1b2c3d',
        payload: { config_key: 'ALERT_ENABLED', config_value: 'false' },
      },
    });
  });

  it('offers the value choices and rule of the chosen setting', () => {
    expect(configValueChoices('ALERT_ENABLED')).toEqual(['true', 'false']);
    expect(configValueChoices('DAEMON_LOG_LEVEL')).toEqual(['debug', 'info', 'warning', 'error']);
    expect(configValueChoices('DAEMON_POLL_INTERVAL')).toBeNull();
    expect(configValueHint('DAEMON_POLL_INTERVAL')).toBe(
      'Value must be an integer from 10 to 86400 (seconds) for DAEMON_POLL_INTERVAL',
    );
    expect(configValueHint('NOPE')).toBeNull();
  });

  it('queues to a group, with the client or to every client', () => {
    const group = { kind: 'group' as const, group_name: 'edge', client_id: 'acme' };
    expect(draftQueueBody('restart', group, {}, '')).toEqual({
      ok: true,
      body: { command_type: 'restart', group_target: 'edge', client_id: 'acme', payload: {} },
    });
    expect(draftQueueBody('restart', { ...group, all_clients: true }, {}, '')).toEqual({
      ok: true,
      body: { command_type: 'restart', group_target: 'edge', all_clients: true, payload: {} },
    });
    expect(draftQueueBody('restart', { kind: 'group', group_name: ' ' }, {}, '')).toEqual({
      ok: false,
      message: 'Choose a group',
    });
    expect(draftQueueBody('restart', { kind: 'agent', agent_id: '' }, {}, '')).toEqual({
      ok: false,
      message: 'Choose an agent',
    });
  });

  it('refuses a priority outside 0-10 and an unknown type', () => {
    for (const p of ['11', '-1', '2.5', 'x'])
      expect(draftQueueBody('restart', agent, {}, p)).toEqual({
        ok: false,
        message: 'Priority must be an integer from 0 to 10',
      });
    expect(draftQueueBody('reboot', agent, {}, '')).toEqual({ ok: false, message: 'Unknown command type: reboot' });
  });

  it('leaves empty inputs out and reads booleans', () => {
    expect(payloadOf('shutdown', { graceful: '' })).toEqual({});
    expect(payloadOf('shutdown', { graceful: 'false' })).toEqual({ graceful: false });
    expect(payloadOf('update', { branch: 'main', version: ' ' })).toEqual({ branch: 'main' });
    expect(draftQueueBody('update', agent, { version: '1.2.3' }, '')).toEqual({
      ok: false,
      message: 'payload.version must be a version tag vX.Y.Z',
    });
    expect(draftQueueBody('set_log_level', agent, {}, '')).toEqual({
      ok: false,
      message: 'payload.level is required for set_log_level',
    });
  });

  it('has a field list for every command type, with the required keys of the protocol', () => {
    expect(Object.keys(COMMAND_FIELDS).sort()).toEqual([
      'push_config',
      'push_session',
      'restart',
      'run_scan',
      'set_log_level',
      'shutdown',
      'update',
      'update_schedule',
    ]);
    expect(COMMAND_FIELDS.update_schedule.filter((f) => f.required).map((f) => f.key)).toEqual(['schedule_id']);
  });
});

describe('run_scan offers', () => {
  const target = (name: string, last: string | null): TargetView => ({
    client_id: 'acme',
    target: name,
    last_session_id: null,
    last_scanned_at: last,
    coverage: null,
    open: 0,
    resolved: 0,
  });

  it("offers the client's scannable targets, most recently scanned first", () => {
    const known = [
      target('10.0.0.0/24', '2026-11-01T10:00:00.000Z'),
      target('Nessus import (Q3)', '2026-11-20T10:00:00.000Z'),
      target('web.acme.test', '2026-11-10T10:00:00.000Z'),
      target('10.0.1.5', null),
    ];
    expect(recentTargets(known).map((t) => t.target)).toEqual(['web.acme.test', '10.0.0.0/24', '10.0.1.5']);
  });
});

describe('fleet filters in the address', () => {
  it('writes the filters that are set, trimmed, under the names of the fleet query', () => {
    expect(fleetHref(NO_FILTERS)).toBe('/console/fleet');
    const f = { q: ' raspberry ', state: 'stale' as const, client: 'acme', group: '', version: '4.2.3' };
    expect(fleetHref(f)).toBe('/console/fleet?q=raspberry&state=stale&client_id=acme&version=4.2.3');
    expect(fleetQuery(f, 25, 'c1')).toEqual({
      limit: 25,
      q: 'raspberry',
      state: 'stale',
      client_id: 'acme',
      version: '4.2.3',
      cursor: 'c1',
    });
  });

  it('reads them back, leaving out an unknown state and unknown names', () => {
    expect(fleetFiltersOf({ q: 'raspberry', state: 'stale', client_id: 'acme', group: 'edge', other: 'x' })).toEqual({
      q: 'raspberry',
      state: 'stale',
      client: 'acme',
      group: 'edge',
      version: '',
    });
    expect(fleetFiltersOf({ state: 'sleeping' })).toEqual(NO_FILTERS);
    expect(fleetFiltersOf({})).toEqual(NO_FILTERS);
    const href = fleetHref({ ...NO_FILTERS, state: 'deregistered', group: 'a&b=c' });
    expect(fleetFiltersOf(Object.fromEntries(new URL(href, 'http://x').searchParams))).toEqual({
      ...NO_FILTERS,
      state: 'deregistered',
      group: 'a&b=c',
    });
  });
});

describe('agent records', () => {
  it('reads the state', () => {
    expect(agentState({ is_stale: false, deregistered_at: null })).toBe('online');
    expect(agentState({ is_stale: true, deregistered_at: null })).toBe('stale');
    expect(agentState({ is_stale: false, deregistered_at: '2026-01-01T00:00:00.000Z' })).toBe('deregistered');
  });

  it('formats durations, ages and times', () => {
    expect(formatDuration(0)).toBe('0 s');
    expect(formatDuration(59.9)).toBe('59 s');
    expect(formatDuration(720)).toBe('12 min');
    expect(formatDuration(3 * 3600)).toBe('3 h');
    expect(formatDuration(3 * 3600 + 300)).toBe('3 h 5 min');
    expect(formatDuration(2 * 86400 + 4 * 3600 + 59)).toBe('2 d 4 h');
    expect(formatDuration(-1)).toBe('—');
    expect(formatAge(90)).toBe('1 min ago');
    expect(formatAge(Number.NaN)).toBe('—');
  });

  it('reads schedules and system info defensively', () => {
    expect(
      scheduleRows([
        {
          config: 'weekly.conf',
          schedule_id: 'weekly',
          last_run: null,
          last_status: 'none',
          next_run: '2026-11-30T02:00:00.000Z',
          retry_count: 0,
        },
        {
          config: 'portal',
          name: 'Nightly east',
          source: 'portal',
          schedule_id: 'psch_0123456789ab',
          last_run: '2026-11-29T02:00:00.000Z',
          last_status: 'success',
          next_run: '2026-11-30T02:00:00.000Z',
          retry_count: 0,
        },
        'junk',
        null,
        [1],
      ]),
    ).toEqual([
      {
        id: 'weekly',
        source: 'local',
        config: 'weekly.conf',
        lastRun: '—',
        lastStatus: 'none',
        nextRun: '2026-11-30 02:00 UTC',
        retries: '0',
      },
      {
        id: 'psch_0123456789ab',
        source: 'portal',
        config: 'Nightly east',
        lastRun: '2026-11-29 02:00 UTC',
        lastStatus: 'success',
        nextRun: '2026-11-30 02:00 UTC',
        retries: '0',
      },
    ]);
    expect(scheduleRows(null)).toEqual([]);
    expect(systemInfoRows({ os: 'Debian', cpu: { cores: 4 }, mem: 2048 })).toEqual([
      ['os', 'Debian'],
      ['cpu', '{"cores":4}'],
      ['mem', '2048'],
    ]);
    expect(systemInfoRows(null)).toEqual([]);
  });
});

describe('command history', () => {
  it('polls while a command can still change', () => {
    expect(needsPolling([{ status: 'completed' }, { status: 'failed' }])).toBe(false);
    expect(needsPolling([{ status: 'completed' }, { status: 'sent' }])).toBe(true);
    expect(needsPolling([])).toBe(false);
  });

  it('links a session to the session view with its client, and names the target', () => {
    expect(sessionHref('20261125_101500', 'acme')).toBe('/collect/?session=20261125_101500&client_id=acme');
    expect(sessionHref('a&b', 'x y')).toBe('/collect/?session=a%26b&client_id=x+y');
    // No client: the namespace of sessions uploaded without one, named by the empty value.
    expect(sessionHref('20261125_101500', null)).toBe('/collect/?session=20261125_101500&client_id=');
    expect(commandTarget({ agent_id: 'svcd_1', agent_hostname: null, group_target: null })).toBe('svcd_1');
    expect(commandTarget({ agent_id: 'svcd_1', agent_hostname: 'edge-01', group_target: 'edge' })).toBe(
      'edge-01 (group edge)',
    );
  });

  it('tells how long a command has run: from its acknowledgement, else its delivery, to its end or now', () => {
    const now = Date.parse('2026-11-29T10:30:00Z');
    const at = (hhmm: string) => `2026-11-29T${hhmm}:00Z`;
    const base = { sent_at: null, acked_at: null, completed_at: null };
    expect(commandElapsed({ ...base, status: 'pending' }, now)).toBeNull();
    expect(commandElapsed({ ...base, status: 'sent', sent_at: at('10:29') }, now)).toBe(
      'delivered for 1 min; the agent reports when it ends',
    );
    expect(commandElapsed({ ...base, status: 'acked', sent_at: at('08:00'), acked_at: at('08:05') }, now)).toBe(
      'running for 2 h 25 min; the agent reports when it ends',
    );
    expect(
      commandElapsed(
        { status: 'completed', sent_at: at('08:00'), acked_at: at('08:05'), completed_at: at('09:05') },
        now,
      ),
    ).toBe('took 1 h');
    // Failed by the portal before the agent took it: no time to tell.
    expect(commandElapsed({ ...base, status: 'failed' }, now)).toBeNull();
  });
});

describe('deregistered agents from the audit log', () => {
  let id = 0;
  const ev = (event_type: AuditEvent['event_type'], agent_id: unknown, client_id: string | null = 'acme') => ({
    id: ++id,
    event_type,
    session_id: null,
    client_id,
    actor: 'admin@test.local',
    data: { agent_id },
    created_at: `2026-11-25T10:00:${String(60 - id).padStart(2, '0')}.000Z`,
  });

  it('keeps agents whose latest registration event is a deregistration, per client', () => {
    const events = [
      ev('agent_deregistered', 'a1'),
      ev('agent_reregistered', 'a2'),
      ev('agent_deregistered', 'a1', 'beta'),
      ev('agent_purged', 'a3'),
      ev('agent_deregistered', 'a2'),
      ev('agent_deregistered', 'a3'),
      ev('license_created', 'a4'),
      ev('agent_deregistered', 42),
    ];
    expect(deregisteredAgents(events)).toEqual([
      {
        agent_id: 'a1',
        client_id: 'acme',
        deregistered_at: events[0]!.created_at,
        deregistered_by: 'admin@test.local',
      },
      {
        agent_id: 'a1',
        client_id: 'beta',
        deregistered_at: events[2]!.created_at,
        deregistered_by: 'admin@test.local',
      },
    ]);
  });
});
