import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkCommandPayload, MAX_COMMANDS_PER_POLL, MAX_OUTPUT_BYTES, type CommandType } from '@svc/protocol';
import { capOutput } from '../src/agents/status-report.ts';
import type { DomainEvent } from '../src/events/bus.ts';
import {
  createLicense,
  createScopedUser,
  FakeClock,
  licenseAction,
  newAgentId,
  uniqueClientId,
  type LicenseFixture,
} from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { ADMIN_EMAIL, LEGACY_KEY, type TestPortal } from '@svc/test-support/portal';
import { useFleetPortal } from '@svc/test-support/fleet-portal';
import { postUpload, sessionDoc, sessionParts } from '@svc/test-support/upload';

/**
 * The command channel: POST /api/agent-commands (queue), GET ?agent_id= (agent poll),
 * GET ?limit= / ?command_id= (admin history) and PATCH (agent status report). docs/agent/commands.md,
 * docs/api.md#agents-and-commands.
 */

let portal: TestPortal;
let db: pg.Client;
let admin: string;
const clock = new FakeClock();
const events: DomainEvent[] = [];
useFleetPortal((f) => ({ portal, db, admin } = f), { clock, events });

async function register(key: string, agentId: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await http(portal.url, 'POST', '/api/health', {
    headers: withKey(key),
    json: {
      agent_id: agentId,
      version: '4.2.3',
      timestamp: new Date().toISOString(),
      status: 'running',
      uptime_seconds: 1,
      ...extra,
    },
  });
  expect(res.status, res.text).toBe(200);
  return agentId;
}

const queue = (body: Record<string, unknown>, token = admin) =>
  http(portal.url, 'POST', '/api/agent-commands', { headers: withToken(token), json: body });
const poll = (key: string, agentId: string) =>
  http(portal.url, 'GET', `/api/agent-commands?agent_id=${encodeURIComponent(agentId)}`, { headers: withKey(key) });
const report = (key: string, body: Record<string, unknown>) =>
  http(portal.url, 'PATCH', '/api/agent-commands', { headers: withKey(key), json: body });
const history = (query: string, token = admin) =>
  http(portal.url, 'GET', `/api/agent-commands?${query}`, { headers: withToken(token) });
const addToGroup = (agentId: string, group: string) =>
  http(portal.url, 'POST', '/api/agent-groups', {
    headers: withToken(admin),
    json: { agent_id: agentId, group_name: group },
  });

/** A stored session uploaded with `key` (a result may name only a session of its agent's client). */
async function uploadSession(key: string): Promise<string> {
  const res = await postUpload(portal.url, key, sessionParts(sessionDoc('session-minimal.json')));
  expect(res.status, res.text).toBe(200);
  return res.body.session_id as string;
}

async function queueOne(agentId: string, body: Record<string, unknown> = { command_type: 'restart' }): Promise<number> {
  const res = await queue({ agent_id: agentId, ...body });
  expect(res.status, res.text).toBe(201);
  return res.body.commands[0].id as number;
}

async function commandRow(id: number) {
  const { rows } = await db.query('SELECT *, id::int AS id FROM agent_commands WHERE id = $1', [id]);
  return rows[0] as Record<string, any> | undefined;
}

async function resultRow(id: number) {
  const { rows } = await db.query('SELECT * FROM agent_command_results WHERE command_id = $1', [id]);
  return rows[0] as Record<string, any> | undefined;
}

/** Put a command into `status` through the real transitions. */
async function driveTo(
  key: string,
  agentId: string,
  id: number,
  status: 'pending' | 'sent' | 'acked' | 'completed' | 'failed',
): Promise<void> {
  if (status === 'pending') return;
  expect((await poll(key, agentId)).body.commands.map((c: { id: number }) => c.id)).toContain(id);
  if (status === 'sent') return;
  expect((await report(key, { command_id: id, agent_id: agentId, status: 'acked' })).status).toBe(200);
  if (status === 'acked') return;
  expect(
    (await report(key, { command_id: id, agent_id: agentId, status, exit_code: status === 'completed' ? 0 : 1 }))
      .status,
  ).toBe(200);
}

describe('POST /api/agent-commands (queue)', () => {
  let biz: LicenseFixture;
  let agent: string;
  beforeAll(async () => {
    biz = await createLicense(portal, { tier: 'business' });
    agent = await register(biz.key, newAgentId('q'));
  });

  const VALID: [string, Record<string, unknown>, Record<string, unknown>][] = [
    [
      'run_scan',
      { targets: '10.0.0.0/24, 10.0.1.7', profile: 'quick', upload: true },
      { targets: '10.0.0.0/24,10.0.1.7', profile: 'quick', upload: true },
    ],
    [
      'update_schedule',
      { schedule_id: 'sched_0123456789ab', action: 'update', cron: '0 2 * * *' },
      { schedule_id: 'sched_0123456789ab', action: 'update', cron: '0 2 * * *' },
    ],
    [
      'push_config',
      { config_key: 'DAEMON_HEARTBEAT_INTERVAL', config_value: 120 },
      { config_key: 'DAEMON_HEARTBEAT_INTERVAL', config_value: '120' },
    ],
    ['push_session', { session_id: '20250601_120000' }, { session_id: '20250601_120000' }],
    ['restart', {}, {}],
    ['shutdown', { graceful: true }, { graceful: true }],
    ['update', { version: 'v4.3.0' }, { version: 'v4.3.0' }],
    ['set_log_level', { level: 'debug' }, { level: 'debug' }],
  ];

  it.each(VALID)('%s with a valid payload is queued as pending (201)', async (type, payload, stored) => {
    clock.advance(1_000);
    const res = await queue({ agent_id: agent, command_type: type, payload, priority: 6 });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      success: true,
      commands: [
        {
          id: expect.any(Number),
          agent_id: agent,
          command_type: type,
          status: 'pending',
          created_at: clock.now().toISOString(),
          // The default expiry: 24 hours after queueing (docs/agent/commands.md, "Cancel, expiry and redelivery").
          expires_at: new Date(clock.now().getTime() + 86_400_000).toISOString(),
        },
      ],
    });
    const row = await commandRow(res.body.commands[0].id);
    expect(row).toMatchObject({
      agent_id: agent,
      command_type: type,
      payload: stored,
      priority: 6,
      created_by: ADMIN_EMAIL,
      group_target: null,
      status: 'pending',
      sent_at: null,
      acked_at: null,
      completed_at: null,
    });
    expect((row?.['created_at'] as Date | undefined)?.toISOString()).toBe(clock.now().toISOString());
  });

  it('an unknown payload key is accepted, stored and delivered as sent; known keys are still checked', async () => {
    const id = await queueOne(agent, { command_type: 'shutdown', payload: { graceful: true, drain_s: 30 } });
    expect(await commandRow(id)).toMatchObject({ payload: { graceful: true, drain_s: 30 } });
    const bad = await queue({ agent_id: agent, command_type: 'shutdown', payload: { graceful: 'no', drain_s: 30 } });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'payload.graceful must be true or false' });
  });

  it('priority defaults to 5 and the payload to {}', async () => {
    const id = await queueOne(agent, { command_type: 'restart' });
    expect(await commandRow(id)).toMatchObject({ priority: 5, payload: {} });
  });

  it.each([[0], [10]])('priority %i is accepted', async (priority) => {
    const id = await queueOne(agent, { command_type: 'restart', priority });
    expect((await commandRow(id))?.['priority']).toBe(priority);
  });

  it.each([[-1], [11], [2.5], ['high'], [null]])('priority %j is a 400', async (priority) => {
    const res = await queue({ agent_id: agent, command_type: 'restart', priority });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/priority/);
  });

  it('an unknown command type is a 400 naming the valid ones', async () => {
    const res = await queue({ agent_id: agent, command_type: 'format_disk' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error:
        'command_type must be one of run_scan, update_schedule, push_config, push_session, restart, shutdown, update, set_log_level',
    });
  });

  it('both or neither of agent_id and group_target is a 400', async () => {
    for (const body of [
      { command_type: 'restart' },
      { command_type: 'restart', agent_id: agent, group_target: 'fleet' },
    ]) {
      const res = await queue(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'Exactly one of agent_id or group_target is required' });
    }
  });

  it('a missing command_type, an unknown field or a non-object payload is a 400', async () => {
    for (const body of [
      { agent_id: agent },
      { agent_id: agent, command_type: 'restart', urgent: true },
      { agent_id: agent, command_type: 'restart', payload: [] },
      { agent_id: agent, command_type: 'restart', payload: 'x' },
    ]) {
      const res = await queue(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(typeof res.body.error).toBe('string');
    }
  });

  it.each([
    ['run_scan without targets', 'run_scan', {}, /no targets were specified/],
    ['run_scan with empty targets', 'run_scan', { targets: '' }, /no targets were specified/],
    ['run_scan with an option as target', 'run_scan', { targets: '--script=x' }, /invalid target/],
    [
      'push_config outside the allowlist',
      'push_config',
      { config_key: 'SCAN_TARGETS', config_value: '1.2.3.4' },
      /Config key not in remote-update allowlist/,
    ],
    [
      'push_config with a newline in the value',
      'push_config',
      { config_key: 'ALERT_ENABLED', config_value: 'true\nSCAN_TARGETS=1.2.3.4' },
      /^payload\.config_value must not contain control characters$/,
    ],
    [
      'push_config with a carriage return in the value',
      'push_config',
      { config_key: 'ALERT_ENABLED', config_value: 'true\r' },
      /control characters/,
    ],
    [
      'push_config with a C1 control in the value',
      'push_config',
      { config_key: 'DAEMON_LOG_LEVEL', config_value: 'info\u0085SCAN_TARGETS=1.2.3.4' },
      /^payload\.config_value must not contain control characters$/,
    ],
    [
      'push_config with U+2028 in the value',
      'push_config',
      { config_key: 'DAEMON_LOG_LEVEL', config_value: 'info\u2028' },
      /^payload\.config_value must not contain control characters$/,
    ],
    [
      'push_config with a non-numeric interval',
      'push_config',
      { config_key: 'DAEMON_POLL_INTERVAL', config_value: 'often' },
      /^payload\.config_value must be an integer from 10 to 86400 \(seconds\) for DAEMON_POLL_INTERVAL$/,
    ],
    [
      'push_config with a threshold out of range',
      'push_config',
      { config_key: 'ALERT_RISK_THRESHOLD', config_value: 101 },
      /^payload\.config_value must be an integer from 0 to 100 for ALERT_RISK_THRESHOLD$/,
    ],
    [
      'push_config with a non-boolean alert switch',
      'push_config',
      { config_key: 'ALERT_ENABLED', config_value: 'on' },
      /^payload\.config_value must be true or false for ALERT_ENABLED$/,
    ],
    [
      'set_log_level with a bad level',
      'set_log_level',
      { level: 'verbose' },
      /^payload\.level must be one of debug, info, warning, error$/,
    ],
    ['update with version v1.2', 'update', { version: 'v1.2' }, /^payload\.version must be a version tag vX\.Y\.Z$/],
    [
      'update with branch --upload-pack=x',
      'update',
      { branch: '--upload-pack=x' },
      /^payload\.branch must be a git branch name$/,
    ],
    [
      'an unknown payload key that is no name',
      'restart',
      { '-x': 5 },
      /^Unknown payload key for restart must be a name/,
    ],
    ['push_session with a traversal', 'push_session', { session_id: '../../x' }, /session name/],
  ])('%s is a 400', async (_label, type, payload, message) => {
    const before = (await db.query('SELECT count(*)::int AS n FROM agent_commands WHERE agent_id = $1', [agent]))
      .rows[0].n;
    const res = await queue({ agent_id: agent, command_type: type, payload });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(message);
    expect(Object.keys(res.body)).toEqual(['error']);
    expect(
      (await db.query('SELECT count(*)::int AS n FROM agent_commands WHERE agent_id = $1', [agent])).rows[0].n,
    ).toBe(before);
  });

  // The agent daemon checks payloads with the same function: the portal's 400 is its message, word for word.
  it.each([
    ['run_scan', {}, 'run_scan needs targets: no targets were specified'],
    [
      'run_scan',
      { targets: '10.0.0.1,--script=x' },
      'invalid target "--script=x": starts with "-" (a scanner would read it as an option)',
    ],
    ['push_config', { config_value: '1' }, 'payload.config_key is required for push_config'],
    [
      'update_schedule',
      { schedule_id: 's1', cron: '* * *' },
      'payload.cron must be a cron expression of 5 or 6 fields',
    ],
    ['push_session', { session_id: '../../x' }, 'payload.session_id must be a session name YYYYMMDD_HHMMSS'],
    ['shutdown', { graceful: 'yes' }, 'payload.graceful must be true or false'],
  ] as [CommandType, Record<string, unknown>, string][])(
    "%s %j is a 400 with the protocol check's message",
    async (type, payload, message) => {
      expect(checkCommandPayload(type, payload)).toEqual({ ok: false, message });
      const res = await queue({ agent_id: agent, command_type: type, payload });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: message });
    },
  );

  it('an unknown agent is a 404; a deregistered one a 409; a professional one a 403', async () => {
    const unknown = await queue({ agent_id: newAgentId('ghost'), command_type: 'restart' });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'Agent not found' });

    const gone = await register(biz.key, newAgentId('gone'));
    expect(
      (
        await http(portal.url, 'PATCH', '/api/agents', {
          headers: withToken(admin),
          json: { agent_id: gone, action: 'deregister' },
        })
      ).status,
    ).toBe(200);
    const dereg = await queue({ agent_id: gone, command_type: 'restart' });
    expect(dereg.status).toBe(409);
    expect(dereg.body).toEqual({ error: 'Agent is deregistered' });

    const pro = await createLicense(portal, { tier: 'professional' });
    const proAgent = await register(pro.key, newAgentId('pro'));
    const refused = await queue({ agent_id: proAgent, command_type: 'restart' });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: 'Insufficient permissions for agent:commands' });
    const { rows } = await db.query('SELECT count(*)::int AS n FROM agent_commands WHERE agent_id = ANY($1)', [
      [gone, proAgent],
    ]);
    expect(rows[0].n).toBe(0);
  });

  it('audits command_dispatched with the admin as actor and the documented data, and publishes it', async () => {
    const seen = events.length;
    const res = await queue({
      agent_id: agent,
      command_type: 'run_scan',
      payload: { targets: '10.9.9.9' },
      priority: 9,
    });
    expect(res.status).toBe(201);
    const id = res.body.commands[0].id as number;
    const { rows } = await db.query(
      `SELECT * FROM audit_events WHERE event_type = 'command_dispatched' AND data->'command_ids' @> $1::jsonb`,
      [JSON.stringify([id])],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ actor: ADMIN_EMAIL, client_id: biz.record.client_id, session_id: null });
    expect(rows[0].data).toEqual({
      command_ids: [id],
      agent_ids: [agent],
      command_type: 'run_scan',
      group_target: null,
      priority: 9,
      created_by: ADMIN_EMAIL,
      expires_at: new Date(clock.now().getTime() + 86_400_000).toISOString(),
    });
    await portal.ctx.events.drain();
    expect(events.slice(seen)).toEqual([
      expect.objectContaining({ event_type: 'command_dispatched', actor: ADMIN_EMAIL, data: rows[0].data }),
    ]);
  });

  it('a refused queue request writes no audit event', async () => {
    const { rows: before } = await db.query(
      `SELECT count(*)::int AS n FROM audit_events WHERE event_type = 'command_dispatched'`,
    );
    await queue({ agent_id: agent, command_type: 'run_scan', payload: {} });
    await queue({ agent_id: newAgentId('ghost'), command_type: 'restart' });
    const { rows: after } = await db.query(
      `SELECT count(*)::int AS n FROM audit_events WHERE event_type = 'command_dispatched'`,
    );
    expect(after[0].n).toBe(before[0].n);
  });

  describe('group targets', () => {
    let group: string;
    let members: string[];
    beforeAll(async () => {
      group = `grp-${randomBytes(3).toString('hex')}`;
      const other = await createLicense(portal, { tier: 'msp' });
      members = [
        await register(biz.key, newAgentId('gm')),
        await register(biz.key, newAgentId('gm')),
        await register(other.key, newAgentId('gm')),
      ];
      for (const m of members) expect((await addToGroup(m, group)).status).toBe(201);
      // A member of another group only.
      expect((await addToGroup(agent, `${group}-other`)).status).toBe(201);
    });

    it('creates one command per current member, each with group_target, and audits one dispatch', async () => {
      clock.advance(1_000);
      // The name is used by two clients (groups are per client): reaching both needs all_clients.
      const res = await queue({
        group_target: group,
        command_type: 'set_log_level',
        payload: { level: 'warning' },
        priority: 2,
        all_clients: true,
      });
      expect(res.status).toBe(201);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(res.body.success).toBe(true);
      expect(Object.keys(res.body)).toEqual(['success', 'commands']);
      expect(res.body.commands).toHaveLength(3);
      expect(res.body.commands.map((c: { agent_id: string }) => c.agent_id).sort()).toEqual([...members].sort());
      for (const c of res.body.commands) {
        expect(c).toEqual({
          id: expect.any(Number),
          agent_id: c.agent_id,
          command_type: 'set_log_level',
          status: 'pending',
          created_at: clock.now().toISOString(),
          expires_at: new Date(clock.now().getTime() + 86_400_000).toISOString(),
        });
        expect(await commandRow(c.id)).toMatchObject({
          agent_id: c.agent_id,
          group_target: group,
          payload: { level: 'warning' },
          priority: 2,
          created_by: ADMIN_EMAIL,
          status: 'pending',
        });
      }
      const ids = res.body.commands.map((c: { id: number }) => c.id);
      const { rows } = await db.query(
        `SELECT * FROM audit_events WHERE event_type = 'command_dispatched' AND data->>'group_target' = $1`,
        [group],
      );
      expect(rows).toHaveLength(1);
      expect(rows[0].actor).toBe(ADMIN_EMAIL);
      // Members of two clients: the dispatch belongs to no single client.
      expect(rows[0].client_id).toBeNull();
      expect(rows[0].data).toEqual({
        command_ids: ids,
        agent_ids: res.body.commands.map((c: { agent_id: string }) => c.agent_id),
        command_type: 'set_log_level',
        group_target: group,
        priority: 2,
        created_by: ADMIN_EMAIL,
        expires_at: new Date(clock.now().getTime() + 86_400_000).toISOString(),
      });
    });

    it('only current members: a removed or deregistered member gets nothing', async () => {
      const g = `grp-${randomBytes(3).toString('hex')}`;
      const [a, b, c] = [
        await register(biz.key, newAgentId('cur')),
        await register(biz.key, newAgentId('cur')),
        await register(biz.key, newAgentId('cur')),
      ];
      for (const m of [a, b, c]) expect((await addToGroup(m, g)).status).toBe(201);
      expect(
        (
          await http(portal.url, 'DELETE', `/api/agent-groups?agent_id=${b}&group_name=${g}`, {
            headers: withToken(admin),
          })
        ).status,
      ).toBe(200);
      expect(
        (
          await http(portal.url, 'PATCH', '/api/agents', {
            headers: withToken(admin),
            json: { agent_id: c, action: 'deregister' },
          })
        ).status,
      ).toBe(200);
      const res = await queue({ group_target: g, command_type: 'restart' });
      expect(res.status).toBe(201);
      expect(res.body.commands.map((x: { agent_id: string }) => x.agent_id)).toEqual([a]);
    });

    it('professional members are skipped and listed; a group of only professional agents is a 403', async () => {
      const g = `grp-${randomBytes(3).toString('hex')}`;
      const pro = await createLicense(portal, { tier: 'professional' });
      const p = await register(pro.key, newAgentId('gp'));
      expect((await addToGroup(p, g)).status).toBe(201);
      const only = await queue({ group_target: g, command_type: 'restart' });
      expect(only.status).toBe(403);
      expect(only.body).toEqual({ error: 'Insufficient permissions for agent:commands' });
      // A refused broadcast writes nothing: no command, no command_dispatched event.
      expect((await db.query('SELECT count(*)::int AS n FROM agent_commands WHERE agent_id = $1', [p])).rows[0].n).toBe(
        0,
      );
      expect(
        (
          await db.query(
            `SELECT count(*)::int AS n FROM audit_events WHERE event_type = 'command_dispatched' AND data->>'group_target' = $1`,
            [g],
          )
        ).rows[0].n,
      ).toBe(0);

      const b = await register(biz.key, newAgentId('gb'));
      expect((await addToGroup(b, g)).status).toBe(201);
      const mixed = await queue({ group_target: g, command_type: 'restart', all_clients: true });
      expect(mixed.status).toBe(201);
      expect(mixed.body.commands.map((x: { agent_id: string }) => x.agent_id)).toEqual([b]);
      expect(mixed.body.skipped).toEqual([{ agent_id: p, reason: 'Insufficient permissions for agent:commands' }]);
    });

    it('an unknown group, and a group whose members all left, are a 404', async () => {
      const unknown = await queue({ group_target: 'no-such-group', command_type: 'restart' });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ error: 'Group not found or has no members' });

      const g = `grp-${randomBytes(3).toString('hex')}`;
      const m = await register(biz.key, newAgentId('lone'));
      expect((await addToGroup(m, g)).status).toBe(201);
      expect(
        (
          await http(portal.url, 'DELETE', `/api/agent-groups?agent_id=${m}&group_name=${g}`, {
            headers: withToken(admin),
          })
        ).status,
      ).toBe(200);
      const empty = await queue({ group_target: g, command_type: 'restart' });
      expect(empty.status).toBe(404);
      expect(empty.body).toEqual({ error: 'Group not found or has no members' });
    });

    it('an invalid group name is a 400', async () => {
      const res = await queue({ group_target: '-all', command_type: 'restart' });
      expect(res.status).toBe(400);
    });
  });

  it('is admin only: scoped members get 403 Admin access required, no token 401, a license key 401', async () => {
    const client = uniqueClientId('mspq');
    const msp = await createLicense(portal, { tier: 'msp', client_id: client });
    const own = await register(msp.key, newAgentId('own'));
    const member = await createScopedUser(portal, [client]);
    const scoped = await queue({ agent_id: own, command_type: 'restart' }, member.token);
    expect(scoped.status).toBe(403);
    expect(scoped.body).toEqual({ error: 'Admin access required' });
    const none = await http(portal.url, 'POST', '/api/agent-commands', {
      json: { agent_id: own, command_type: 'restart' },
    });
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ error: 'Unauthorized' });
    const key = await http(portal.url, 'POST', '/api/agent-commands', {
      headers: withKey(msp.key),
      json: { agent_id: own, command_type: 'restart' },
    });
    expect(key.status).toBe(401);
    expect((await db.query('SELECT count(*)::int AS n FROM agent_commands WHERE agent_id = $1', [own])).rows[0].n).toBe(
      0,
    );
  });
});

describe('command eligibility follows the key that registered the agent', () => {
  it("a business agent heartbeating with its client's professional key still gets commands queued", async () => {
    const client = uniqueClientId('elig');
    const biz = await createLicense(portal, { tier: 'business', client_id: client });
    const pro = await createLicense(portal, { tier: 'professional', client_id: client });
    const agent = await register(biz.key, newAgentId('elb'));
    await register(pro.key, agent);
    const res = await queue({ agent_id: agent, command_type: 'restart' });
    expect(res.status).toBe(201);
    // Delivered to the registering key's heartbeat; never to the professional key's (docs/api.md#agents-and-commands).
    await register(pro.key, agent);
    expect((await poll(biz.key, agent)).body.commands.map((c: { id: number }) => c.id)).toEqual([
      res.body.commands[0].id,
    ]);
  });

  it("a professional agent heartbeating with its client's msp key stays ineligible, alone and in a group", async () => {
    const client = uniqueClientId('elig');
    const pro = await createLicense(portal, { tier: 'professional', client_id: client });
    const msp = await createLicense(portal, { tier: 'msp', client_id: client });
    const agent = await register(pro.key, newAgentId('elp'));
    await register(msp.key, agent);
    const single = await queue({ agent_id: agent, command_type: 'restart' });
    expect(single.status).toBe(403);
    expect(single.body).toEqual({ error: 'Insufficient permissions for agent:commands' });
    const group = `elig-${randomBytes(3).toString('hex')}`;
    const other = await register(msp.key, newAgentId('elm'));
    for (const m of [agent, other]) expect((await addToGroup(m, group)).status).toBe(201);
    const broadcast = await queue({ group_target: group, command_type: 'restart' });
    expect(broadcast.status).toBe(201);
    expect(broadcast.body.commands.map((c: { agent_id: string }) => c.agent_id)).toEqual([other]);
    expect(broadcast.body.skipped).toEqual([
      { agent_id: agent, reason: 'Insufficient permissions for agent:commands' },
    ]);
  });

  it("when the registering key is revoked, the highest tier among the client's active keys decides", async () => {
    const client = uniqueClientId('elig');
    const biz = await createLicense(portal, { tier: 'business', client_id: client });
    const agent = await register(biz.key, newAgentId('elr'));
    const pro = await createLicense(portal, { tier: 'professional', client_id: client });
    await licenseAction(portal, biz.record.id, 'revoke');
    // Only a professional key is left active: no commands.
    expect((await queue({ agent_id: agent, command_type: 'restart' })).status).toBe(403);
    const msp = await createLicense(portal, { tier: 'msp', client_id: client });
    expect((await queue({ agent_id: agent, command_type: 'restart' })).status).toBe(201);
    await licenseAction(portal, msp.record.id, 'deactivate');
    expect((await queue({ agent_id: agent, command_type: 'restart' })).status).toBe(403);
    expect(pro.record.tier).toBe('professional');
  });
});

describe('GET /api/agent-commands?agent_id= (agent poll)', () => {
  let biz: LicenseFixture;
  beforeAll(async () => {
    biz = await createLicense(portal, { tier: 'business' });
  });

  it(`answers up to ${MAX_COMMANDS_PER_POLL} pending commands by priority then age, with group_target; they become sent`, async () => {
    const agent = await register(biz.key, newAgentId('poll'));
    const group = `pg-${randomBytes(3).toString('hex')}`;
    expect((await addToGroup(agent, group)).status).toBe(201);
    const base = clock.now().getTime();
    const queued: { id: number; priority: number; created: number }[] = [];
    for (let i = 0; i < 55; i++) {
      const created = base + ((i * 13) % 55) * 1000; // out of id order
      clock.set(new Date(created));
      const priority = i % 4;
      const body =
        i % 5 === 0
          ? { group_target: group, command_type: 'restart', priority }
          : { agent_id: agent, command_type: 'restart', priority };
      const res = await queue(body);
      expect(res.status).toBe(201);
      queued.push({ id: res.body.commands[0].id, priority, created });
    }
    clock.set(new Date(base + 120_000));
    const expected = [...queued].sort((a, b) => b.priority - a.priority || a.created - b.created).map((q) => q.id);

    const first = await poll(biz.key, agent);
    expect(first.status).toBe(200);
    expect(Object.keys(first.body)).toEqual(['commands']);
    expect(first.body.commands.map((c: { id: number }) => c.id)).toEqual(expected.slice(0, 50));
    for (const c of first.body.commands) {
      const q = queued.find((x) => x.id === c.id);
      const index = queued.indexOf(q as (typeof queued)[number]);
      expect(c).toEqual({
        id: q?.id,
        command_type: 'restart',
        payload: {},
        priority: q?.priority,
        created_by: ADMIN_EMAIL,
        group_target: index % 5 === 0 ? group : null,
        created_at: new Date(q?.created ?? 0).toISOString(),
      });
      expect(await commandRow(c.id)).toMatchObject({ status: 'sent', sent_at: clock.now() });
    }
    const second = await poll(biz.key, agent);
    expect(second.body.commands.map((c: { id: number }) => c.id)).toEqual(expected.slice(50));
    expect((await poll(biz.key, agent)).body).toEqual({ commands: [] });
    // Nothing is left for the next heartbeat either.
    const hb = await http(portal.url, 'POST', '/api/health', {
      headers: withKey(biz.key),
      json: {
        agent_id: agent,
        version: '1',
        timestamp: new Date().toISOString(),
        status: 'running',
        uptime_seconds: 5,
      },
    });
    expect(hb.body.commands).toEqual([]);
  });

  it('orders by the stored created_at to the microsecond, not by id', async () => {
    const agent = await register(biz.key, newAgentId('micro'));
    const { rows } = await db.query(
      `INSERT INTO agent_commands (client_id, agent_id, command_type, payload, priority, created_by, created_at) VALUES
         ((SELECT client_id FROM agents WHERE agent_id = $1), $1, 'restart', '{}', 1, 'test', '2025-01-01T00:00:00.000700Z'),
         ((SELECT client_id FROM agents WHERE agent_id = $1), $1, 'restart', '{}', 1, 'test', '2025-01-01T00:00:00.000200Z'),
         ((SELECT client_id FROM agents WHERE agent_id = $1), $1, 'restart', '{}', 2, 'test', '2025-01-01T00:00:00.000900Z')
       RETURNING id::int AS id`,
      [agent],
    );
    const [late, early, urgent] = rows.map((r) => r.id as number);
    const res = await poll(biz.key, agent);
    expect(res.body.commands.map((c: { id: number }) => c.id)).toEqual([urgent, early, late]);
  });

  it("another client's agent and an unknown agent are a 404; a deregistered agent a 403", async () => {
    const other = await createLicense(portal, { tier: 'business' });
    const theirs = await register(other.key, newAgentId('theirs'));
    await queueOne(theirs);
    const res = await poll(biz.key, theirs);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Agent not found' });
    expect((await db.query(`SELECT status FROM agent_commands WHERE agent_id = $1`, [theirs])).rows).toEqual([
      { status: 'pending' },
    ]);

    expect((await poll(biz.key, newAgentId('ghost'))).status).toBe(404);

    const gone = await register(biz.key, newAgentId('gone'));
    expect(
      (
        await http(portal.url, 'PATCH', '/api/agents', {
          headers: withToken(admin),
          json: { agent_id: gone, action: 'deregister' },
        })
      ).status,
    ).toBe(200);
    const dereg = await poll(biz.key, gone);
    expect(dereg.status).toBe(403);
    expect(dereg.body.error).toMatch(/^Agent unregistered/);
  });

  it('the legacy key polls the agents it registered, and a license-registered agent like a missing one', async () => {
    const legacyAgent = await register(LEGACY_KEY, newAgentId('lpl'), { client_id: uniqueClientId('legacy') });
    const own = await queueOne(legacyAgent);
    const mine = await poll(LEGACY_KEY, legacyAgent);
    expect(mine.status).toBe(200);
    expect(mine.body.commands.map((c: { id: number }) => c.id)).toEqual([own]);

    const agent = await register(biz.key, newAgentId('lp'));
    const id = await queueOne(agent);
    const res = await poll(LEGACY_KEY, agent);
    const missing = await poll(LEGACY_KEY, newAgentId('nobody'));
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Agent not found' });
    expect(missing.body).toEqual(res.body);
    expect((await commandRow(id))?.['status']).toBe('pending');
    expect((await poll(biz.key, agent)).body.commands.map((c: { id: number }) => c.id)).toEqual([id]);
  });

  it('one agent id under two clients: each key polls and reports for its own agent only', async () => {
    const a = await createLicense(portal, { tier: 'business' });
    const b = await createLicense(portal, { tier: 'business' });
    const id = newAgentId('twin');
    await register(a.key, id);
    await register(b.key, id);
    const cmdA = (await queue({ agent_id: id, client_id: a.record.client_id, command_type: 'restart' })).body
      .commands[0].id as number;
    const cmdB = (await queue({ agent_id: id, client_id: b.record.client_id, command_type: 'restart' })).body
      .commands[0].id as number;
    expect((await poll(b.key, id)).body.commands.map((c: { id: number }) => c.id)).toEqual([cmdB]);
    // B's key naming A's command for "its" agent id: the command is not its agent's.
    const forged = await report(b.key, { command_id: cmdA, agent_id: id, status: 'acked' });
    expect(forged.status).toBe(404);
    expect(forged.body).toEqual({ error: 'Command not found for this agent' });
    expect((await commandRow(cmdA))?.['status']).toBe('pending');
    expect((await poll(a.key, id)).body.commands.map((c: { id: number }) => c.id)).toEqual([cmdA]);
    expect((await report(a.key, { command_id: cmdA, agent_id: id, status: 'acked' })).status).toBe(200);
    expect((await report(b.key, { command_id: cmdB, agent_id: id, status: 'acked' })).status).toBe(200);
  });

  it('a professional key is a 403 naming agent:commands; a missing key a 403', async () => {
    const pro = await createLicense(portal, { tier: 'professional' });
    const agent = await register(pro.key, newAgentId('pp'));
    const res = await poll(pro.key, agent);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'Insufficient permissions for agent:commands' });
    const none = await http(portal.url, 'GET', `/api/agent-commands?agent_id=${agent}`);
    expect(none.status).toBe(403);
    expect(none.body).toEqual({ error: 'Missing API key' });
  });
});

describe('GET /api/agent-commands (admin history)', () => {
  let clientA: string;
  let clientB: string;
  let agentA: string;
  let agentB: string;
  let keyA: string;
  beforeAll(async () => {
    clientA = uniqueClientId('ha');
    clientB = uniqueClientId('hb');
    const a = await createLicense(portal, { tier: 'business', client_id: clientA });
    const b = await createLicense(portal, { tier: 'business', client_id: clientB });
    keyA = a.key;
    agentA = await register(a.key, newAgentId('ha'));
    agentB = await register(b.key, newAgentId('hb'));
  });

  it('?limit= lists the newest commands first, with group_target and status', async () => {
    const group = `hg-${randomBytes(3).toString('hex')}`;
    expect((await addToGroup(agentA, group)).status).toBe(201);
    clock.advance(1_000);
    const first = await queueOne(agentA, { command_type: 'run_scan', payload: { targets: '10.0.0.1' }, priority: 8 });
    clock.advance(1_000);
    const groupedAt = clock.now().toISOString();
    const grouped = (await queue({ group_target: group, command_type: 'restart' })).body.commands[0].id as number;
    clock.advance(1_000);
    const last = await queueOne(agentB, { command_type: 'set_log_level', payload: { level: 'error' } });

    const res = await history('limit=3');
    expect(res.status).toBe(200);
    expect(res.body.commands.map((c: { id: number }) => c.id)).toEqual([last, grouped, first]);
    expect(res.body.commands[1]).toEqual({
      id: grouped,
      agent_id: agentA,
      agent_hostname: null,
      client_id: clientA,
      command_type: 'restart',
      payload: {},
      priority: 5,
      created_by: ADMIN_EMAIL,
      group_target: group,
      status: 'pending',
      created_at: groupedAt,
      sent_at: null,
      acked_at: null,
      completed_at: null,
      progress: null,
      expires_at: new Date(Date.parse(groupedAt) + 86_400_000).toISOString(),
      cancel_requested: null,
    });
    expect(res.body.commands[2]).toMatchObject({
      id: first,
      group_target: null,
      payload: { targets: '10.0.0.1' },
      priority: 8,
    });
    expect((await history('limit=1')).body.commands.map((c: { id: number }) => c.id)).toEqual([last]);
    // The agent's host name follows its latest heartbeat, in the history and in one command's detail.
    await register(keyA, agentA, { system_info: { hostname: 'edge-07' } });
    const named = await history('limit=3');
    expect(named.body.commands.map((c: { agent_hostname: string | null }) => c.agent_hostname)).toEqual([
      null,
      'edge-07',
      'edge-07',
    ]);
    expect((await history(`command_id=${grouped}`)).body.command.agent_hostname).toBe('edge-07');
    // Without limit: up to 50.
    expect((await history('')).body.commands.length).toBeLessThanOrEqual(50);
  });

  it('?limit= outside 1-500 is a 400', async () => {
    for (const q of ['limit=0', 'limit=501', 'limit=abc']) expect((await history(q)).status, q).toBe(400);
  });

  it('?command_id= answers the command and a null result until it completes, then the result', async () => {
    const id = await queueOne(agentA, { command_type: 'run_scan', payload: { targets: '10.0.0.2' } });
    const pending = await history(`command_id=${id}`);
    expect(pending.status).toBe(200);
    expect(pending.body.result).toBeNull();
    expect(pending.body.command).toMatchObject({
      id,
      agent_id: agentA,
      status: 'pending',
      group_target: null,
      sent_at: null,
    });

    await driveTo(keyA, agentA, id, 'acked');
    const acked = await history(`command_id=${id}`);
    expect(acked.body.result).toBeNull();
    expect(acked.body.command).toMatchObject({
      status: 'acked',
      sent_at: clock.now().toISOString(),
      acked_at: clock.now().toISOString(),
      completed_at: null,
    });

    clock.advance(42_000);
    const sid = await uploadSession(keyA);
    const done = await report(keyA, {
      command_id: id,
      agent_id: agentA,
      status: 'completed',
      exit_code: 0,
      stdout: 'scan ok',
      stderr: '',
      session_id: sid,
    });
    expect(done.status).toBe(200);
    const detail = await history(`command_id=${id}`);
    expect(detail.body).toEqual({
      command: expect.objectContaining({ id, status: 'completed', completed_at: clock.now().toISOString() }),
      result: {
        exit_code: 0,
        stdout: 'scan ok',
        stderr: '',
        session_id: sid,
        // The session view link names the command's client: a session id may exist under several.
        session_url: `/collect/?session=${sid}&client_id=${clientA}`,
        completed_at: clock.now().toISOString(),
      },
    });
  });

  it.each([['999999999'], ['9223372036854775807'], ['9223372036854775808'], ['100000000000000000000']])(
    'an unknown command (%s) is a 404',
    async (id) => {
      const res = await history(`command_id=${id}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Command not found' });
    },
  );

  it("a scoped member sees only its clients' commands", async () => {
    const mine = await queueOne(agentA);
    const theirs = await queueOne(agentB);
    const member = await createScopedUser(portal, [clientA]);
    const list = await history('limit=500', member.token);
    expect(list.status).toBe(200);
    const ids = list.body.commands.map((c: { id: number }) => c.id);
    expect(ids).toContain(mine);
    expect(ids).not.toContain(theirs);
    expect(list.body.commands.every((c: { agent_id: string }) => c.agent_id === agentA)).toBe(true);
    expect((await history(`command_id=${mine}`, member.token)).status).toBe(200);
    const hidden = await history(`command_id=${theirs}`, member.token);
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual({ error: 'Command not found' });
  });

  it('a professional-tier member is refused; no token is a 401', async () => {
    const client = uniqueClientId('hp');
    await createLicense(portal, { tier: 'professional', client_id: client });
    const member = await createScopedUser(portal, [client]);
    const res = await history('limit=5', member.token);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'Insufficient permissions for agent:commands' });
    const none = await http(portal.url, 'GET', '/api/agent-commands?limit=5');
    expect(none.status).toBe(401);
  });
});

describe('PATCH /api/agent-commands (status reports)', () => {
  let biz: LicenseFixture;
  let agent: string;
  beforeAll(async () => {
    biz = await createLicense(portal, { tier: 'business' });
    agent = await register(biz.key, newAgentId('rep'));
  });

  it('sent → acked → completed: stores the result and audits command_completed with the agent as actor', async () => {
    const id = await queueOne(agent, { command_type: 'run_scan', payload: { targets: '10.1.1.1' } });
    await driveTo(biz.key, agent, id, 'sent');

    clock.advance(1_000);
    const acked = await report(biz.key, { command_id: id, agent_id: agent, status: 'acked' });
    expect(acked.status).toBe(200);
    expect(acked.body).toEqual({ success: true, command_id: id, status: 'acked' });
    expect(await commandRow(id)).toMatchObject({ status: 'acked', acked_at: clock.now(), completed_at: null });
    expect(await resultRow(id)).toBeUndefined();

    clock.advance(60_000);
    const sid = await uploadSession(biz.key);
    const seen = events.length;
    const done = await report(biz.key, {
      command_id: id,
      agent_id: agent,
      status: 'completed',
      exit_code: 0,
      stdout: 'Scan finished\n',
      stderr: 'warning: slow host\n',
      session_id: sid,
    });
    expect(done.status).toBe(200);
    expect(done.body).toEqual({ success: true, command_id: id, status: 'completed' });
    expect(await commandRow(id)).toMatchObject({ status: 'completed', completed_at: clock.now() });
    expect(await resultRow(id)).toEqual({
      command_id: String(id),
      exit_code: 0,
      stdout: 'Scan finished\n',
      stderr: 'warning: slow host\n',
      session_id: sid,
      completed_at: clock.now(),
    });

    const { rows } = await db.query(
      `SELECT * FROM audit_events WHERE event_type IN ('command_completed', 'command_failed') AND data->>'command_id' = $1`,
      [String(id)],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      event_type: 'command_completed',
      actor: agent,
      client_id: biz.record.client_id,
      session_id: sid,
    });
    expect(rows[0].data).toEqual({
      command_id: id,
      agent_id: agent,
      command_type: 'run_scan',
      exit_code: 0,
      session_id: sid,
      completed_at: clock.now().toISOString(),
    });
    await portal.ctx.events.drain();
    expect(events.slice(seen)).toEqual([
      expect.objectContaining({ event_type: 'command_completed', actor: agent, data: rows[0].data }),
    ]);
  });

  it('acked → failed with exit code 124 (timeout) stores a failure and audits command_failed', async () => {
    const id = await queueOne(agent, { command_type: 'update', payload: { branch: 'main' } });
    await driveTo(biz.key, agent, id, 'acked');
    clock.advance(300_000);
    const seen = events.length;
    const res = await report(biz.key, {
      command_id: id,
      agent_id: agent,
      status: 'failed',
      exit_code: 124,
      stdout: '',
      stderr: 'Command timed out after 300s',
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, command_id: id, status: 'failed' });
    expect(await commandRow(id)).toMatchObject({ status: 'failed', completed_at: clock.now() });
    expect(await resultRow(id)).toMatchObject({
      exit_code: 124,
      stdout: '',
      stderr: 'Command timed out after 300s',
      session_id: null,
    });
    const { rows } = await db.query(
      `SELECT * FROM audit_events WHERE event_type = 'command_failed' AND data->>'command_id' = $1`,
      [String(id)],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].actor).toBe(agent);
    expect(rows[0].data).toEqual({
      command_id: id,
      agent_id: agent,
      command_type: 'update',
      exit_code: 124,
      session_id: null,
      completed_at: clock.now().toISOString(),
    });
    await portal.ctx.events.drain();
    expect(events.slice(seen)).toEqual([expect.objectContaining({ event_type: 'command_failed', actor: agent })]);
  });

  it('a failure without exit code or output stores nulls and empty strings', async () => {
    const id = await queueOne(agent, {
      command_type: 'push_config',
      payload: { config_key: 'ALERT_ENABLED', config_value: 'true' },
    });
    await driveTo(biz.key, agent, id, 'acked');
    expect((await report(biz.key, { command_id: id, agent_id: agent, status: 'failed' })).status).toBe(200);
    expect(await resultRow(id)).toMatchObject({ exit_code: null, stdout: '', stderr: '', session_id: null });
  });

  const ILLEGAL: [string, string][] = [
    ['pending', 'acked'],
    ['pending', 'completed'],
    ['pending', 'failed'],
    ['sent', 'completed'],
    ['sent', 'failed'],
    ['acked', 'acked'],
    ['completed', 'acked'],
    ['completed', 'completed'],
    ['completed', 'failed'],
    ['failed', 'acked'],
    ['failed', 'completed'],
    ['failed', 'failed'],
  ];

  it.each(ILLEGAL)('%s → %s is a 409 and changes nothing', async (from, to) => {
    const id = await queueOne(agent);
    await driveTo(biz.key, agent, id, from as 'pending');
    const before = await commandRow(id);
    const resultBefore = await resultRow(id);
    const res = await report(biz.key, { command_id: id, agent_id: agent, status: to, exit_code: 3, stdout: 'late' });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: `Illegal status transition: ${from} -> ${to}` });
    expect(await commandRow(id)).toEqual(before);
    expect(await resultRow(id)).toEqual(resultBefore);
  });

  it('an unknown status is a 400', async () => {
    const id = await queueOne(agent);
    await driveTo(biz.key, agent, id, 'sent');
    for (const status of ['sent', 'pending', 'done']) {
      const res = await report(biz.key, { command_id: id, agent_id: agent, status });
      expect(res.status, status).toBe(400);
    }
  });

  it("another agent's command, an unknown command and another client's agent are a 404", async () => {
    const sibling = await register(biz.key, newAgentId('sib'));
    const id = await queueOne(sibling);
    await driveTo(biz.key, sibling, id, 'sent');
    const wrongAgent = await report(biz.key, { command_id: id, agent_id: agent, status: 'acked' });
    expect(wrongAgent.status).toBe(404);
    expect(wrongAgent.body).toEqual({ error: 'Command not found for this agent' });
    expect((await commandRow(id))?.['status']).toBe('sent');

    for (const commandId of [999999999, 2 ** 63, 1e20]) {
      const unknown = await report(biz.key, { command_id: commandId, agent_id: agent, status: 'acked' });
      expect(unknown.status, String(commandId)).toBe(404);
      expect(unknown.body).toEqual({ error: 'Command not found for this agent' });
    }

    const other = await createLicense(portal, { tier: 'business' });
    const foreign = await report(other.key, { command_id: id, agent_id: sibling, status: 'acked' });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ error: 'Agent not found' });
    expect((await commandRow(id))?.['status']).toBe('sent');
  });

  it('a professional key is a 403 naming agent:commands; a missing key a 403', async () => {
    const pro = await createLicense(portal, { tier: 'professional', client_id: biz.record.client_id });
    const id = await queueOne(agent);
    await driveTo(biz.key, agent, id, 'sent');
    const res = await report(pro.key, { command_id: id, agent_id: agent, status: 'acked' });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'Insufficient permissions for agent:commands' });
    const none = await http(portal.url, 'PATCH', '/api/agent-commands', {
      json: { command_id: id, agent_id: agent, status: 'acked' },
    });
    expect(none.status).toBe(403);
    expect(none.body).toEqual({ error: 'Missing API key' });
    expect((await commandRow(id))?.['status']).toBe('sent');
  });

  it('caps stdout and stderr at 10 KB each and strips ANSI escapes and NUL before storing', async () => {
    const id = await queueOne(agent, { command_type: 'run_scan', payload: { targets: '10.2.2.2' } });
    await driveTo(biz.key, agent, id, 'acked');
    const stdout = `\u001b[1;31mCRITICAL\u001b[0m finding\u0000\n` + 'x'.repeat(20_000);
    const stderr = `\u001b]0;title\u0007\u001b[?25l` + 'é'.repeat(8_000); // 16,000 bytes of 2-byte characters
    const sid = await uploadSession(biz.key);
    const res = await report(biz.key, {
      command_id: id,
      agent_id: agent,
      status: 'completed',
      exit_code: 0,
      stdout,
      stderr,
      session_id: sid,
    });
    expect(res.status).toBe(200);
    const row = await resultRow(id);
    expect(row?.['stdout']).toBe(('CRITICAL finding\n' + 'x'.repeat(20_000)).slice(0, MAX_OUTPUT_BYTES));
    expect(Buffer.byteLength(row?.['stdout'] as string)).toBe(10_240);
    expect(row?.['stderr']).toBe('é'.repeat(5_120));
    expect(Buffer.byteLength(row?.['stderr'] as string)).toBe(10_240);
    expect(row?.['session_id']).toBe(sid);
    const detail = await history(`command_id=${id}`);
    expect(detail.body.result.stdout.startsWith('CRITICAL finding\n' + 'x'.repeat(3))).toBe(true);
    expect(detail.body.result.session_url).toBe(`/collect/?session=${sid}&client_id=${biz.record.client_id}`);
  });

  it('keeps session_id for run_scan and push_session only', async () => {
    const sid = await uploadSession(biz.key);
    const push = await queueOne(agent, { command_type: 'push_session', payload: {} });
    await driveTo(biz.key, agent, push, 'acked');
    expect(
      (await report(biz.key, { command_id: push, agent_id: agent, status: 'completed', exit_code: 0, session_id: sid }))
        .status,
    ).toBe(200);
    expect((await resultRow(push))?.['session_id']).toBe(sid);

    const restart = await queueOne(agent, { command_type: 'restart' });
    await driveTo(biz.key, agent, restart, 'acked');
    expect(
      (
        await report(biz.key, {
          command_id: restart,
          agent_id: agent,
          status: 'completed',
          exit_code: 0,
          session_id: '20250601_150000',
        })
      ).status,
    ).toBe(200);
    expect((await resultRow(restart))?.['session_id']).toBeNull();
    const detail = await history(`command_id=${restart}`);
    expect(detail.body.result).toMatchObject({ session_id: null, session_url: null });
  });

  it('a session_id that is not a session name is a 400', async () => {
    const id = await queueOne(agent, { command_type: 'run_scan', payload: { targets: '10.3.3.3' } });
    await driveTo(biz.key, agent, id, 'acked');
    const res = await report(biz.key, {
      command_id: id,
      agent_id: agent,
      status: 'completed',
      exit_code: 0,
      session_id: '../../etc',
    });
    expect(res.status).toBe(400);
    expect((await commandRow(id))?.['status']).toBe('acked');
  });

  it('the legacy key reports for the agents it registered, never for a license-registered one', async () => {
    const legacyAgent = await register(LEGACY_KEY, newAgentId('lrep'), { client_id: uniqueClientId('legacy') });
    const own = await queueOne(legacyAgent);
    await driveTo(LEGACY_KEY, legacyAgent, own, 'completed');
    expect((await commandRow(own))?.['status']).toBe('completed');

    const id = await queueOne(agent);
    await driveTo(biz.key, agent, id, 'sent');
    const forged = await report(LEGACY_KEY, { command_id: id, agent_id: agent, status: 'acked' });
    expect(forged.status).toBe(404);
    expect(forged.body).toEqual({ error: 'Agent not found' });
    expect((await commandRow(id))?.['status']).toBe('sent');
  });

  it("a result may name only a session of the agent's own client: another client's and a missing one are refused alike", async () => {
    const other = await createLicense(portal, { tier: 'business' });
    const foreign = await uploadSession(other.key);
    const missing = `20250601_120000_${randomBytes(5).toString('hex')}`;
    const id = await queueOne(agent, { command_type: 'run_scan', payload: { targets: '10.4.4.4' } });
    await driveTo(biz.key, agent, id, 'acked');
    for (const sessionId of [foreign, missing]) {
      const res = await report(biz.key, {
        command_id: id,
        agent_id: agent,
        status: 'completed',
        exit_code: 0,
        session_id: sessionId,
      });
      expect(res.status, sessionId).toBe(400);
      expect(res.body).toEqual({ error: "session_id does not name a session of this agent's client" });
    }
    // Nothing was stored; the agent can still report its result.
    expect(await commandRow(id)).toMatchObject({ status: 'acked', completed_at: null });
    expect(await resultRow(id)).toBeUndefined();
    const own = await uploadSession(biz.key);
    expect(
      (await report(biz.key, { command_id: id, agent_id: agent, status: 'completed', exit_code: 0, session_id: own }))
        .status,
    ).toBe(200);
    expect((await resultRow(id))?.['session_id']).toBe(own);
  });
});

describe('capOutput', () => {
  it('leaves short clean output alone', () => {
    expect(capOutput('hello\nworld\t!')).toBe('hello\nworld\t!');
    expect(capOutput(null)).toBe('');
    expect(capOutput(undefined)).toBe('');
  });

  it.each([
    ['SGR colours', '\u001b[1;31mred\u001b[0m', 'red'],
    ['cursor hiding', '\u001b[?25lx\u001b[?25h', 'x'],
    ['private CSI parameters', '\u001b[>4;2mx', 'x'],
    ['colon parameters', '\u001b[38:5:196mx', 'x'],
    ['an OSC title ended by BEL', '\u001b]0;my title\u0007x', 'x'],
    ['an OSC hyperlink ended by ST', '\u001b]8;;https://example.com\u001b\\link\u001b]8;;\u001b\\', 'link'],
    ['a charset designation', '\u001b(Bx', 'x'],
    ['a two-byte escape', '\u001bMx', 'x'],
    ['NUL', 'a\u0000b', 'ab'],
  ])('strips %s', (_label, input, output) => {
    expect(capOutput(input)).toBe(output);
  });

  it('cuts at 10240 bytes without splitting a character', () => {
    expect(capOutput('a'.repeat(10_240))).toBe('a'.repeat(10_240));
    expect(capOutput('a'.repeat(10_241))).toBe('a'.repeat(10_240));
    // 10,239 ASCII bytes then a 2-byte character: it does not fit and is left out whole.
    expect(capOutput('a'.repeat(10_239) + 'é' + 'b')).toBe('a'.repeat(10_239));
    // 4-byte characters: 2,560 of them fill the cap exactly.
    expect(capOutput('😀'.repeat(3_000))).toBe('😀'.repeat(2_560));
    expect(capOutput('a' + '😀'.repeat(3_000))).toBe('a' + '😀'.repeat(2_559));
  });

  it('measures the cap after stripping escapes', () => {
    const coloured = '\u001b[32m' + 'y'.repeat(10_240) + '\u001b[0m';
    expect(capOutput(coloured)).toBe('y'.repeat(10_240));
  });
});
