import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { HEARTBEAT_REQUIRED_FIELDS, MAX_COMMANDS_PER_HEARTBEAT } from '@svc/protocol';
import type { DomainEvent } from '../src/events/bus.ts';
import {
  createLicense,
  FakeClock,
  heartbeatBody,
  newAgentId,
  uniqueClientId,
  type LicenseFixture,
} from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { ADMIN_EMAIL, LEGACY_KEY, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { useFleetPortal } from '@svc/test-support/fleet-portal';

/**
 * POST /api/health, the daemon heartbeat (docs/api.md#agents-and-commands,
 * Limits; docs/api.md#licenses): validation order, upsert, first-seen registration, client
 * binding, the agent limit, deregistered agents and command delivery.
 */

let portal: TestPortal;
let db: pg.Client;
let admin: string;
const clock = new FakeClock();
const events: DomainEvent[] = [];
useFleetPortal((f) => ({ portal, db, admin } = f), { clock, events });

const beat = heartbeatBody;

const heartbeat = (key: string, body: unknown) =>
  http(portal.url, 'POST', '/api/health', { headers: withKey(key), json: body });
const queue = (body: Record<string, unknown>) =>
  http(portal.url, 'POST', '/api/agent-commands', { headers: withToken(admin), json: body });
const agentAction = (agentId: string, action: string) =>
  http(portal.url, 'PATCH', '/api/agents', { headers: withToken(admin), json: { agent_id: agentId, action } });

async function agentRow(agentId: string) {
  const { rows } = await db.query('SELECT * FROM agents WHERE agent_id = $1', [agentId]);
  return rows[0] as Record<string, any> | undefined;
}

async function agentRowOf(clientId: string, agentId: string) {
  const { rows } = await db.query('SELECT * FROM agents WHERE client_id = $1 AND agent_id = $2', [clientId, agentId]);
  return rows[0] as Record<string, any> | undefined;
}

async function auditFor(agentId: string, type: string) {
  const { rows } = await db.query(
    `SELECT * FROM audit_events WHERE event_type = $1 AND data->>'agent_id' = $2 ORDER BY id`,
    [type, agentId],
  );
  return rows as Record<string, any>[];
}

describe('POST /api/health: required fields, in the documented order', () => {
  let key: string;
  beforeAll(async () => {
    key = LEGACY_KEY;
  });

  const full = () => beat(newAgentId('val'));

  it('an empty body names agent_id, and only agent_id', async () => {
    const res = await heartbeat(key, {});
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual({ error: 'Missing required field: agent_id' });
  });

  it('a JSON null body names agent_id', async () => {
    const res = await http(portal.url, 'POST', '/api/health', {
      headers: { ...withKey(key), 'content-type': 'application/json' },
      body: 'null',
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Missing required field: agent_id' });
  });

  it('a request without any body names agent_id', async () => {
    const res = await http(portal.url, 'POST', '/api/health', { headers: withKey(key) });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Missing required field: agent_id' });
  });

  it('a body with only agent_id names version', async () => {
    const res = await heartbeat(key, { agent_id: newAgentId() });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Missing required field: version' });
  });

  HEARTBEAT_REQUIRED_FIELDS.forEach((field, i) => {
    for (const [label, value] of [
      ['missing', undefined],
      ['null', null],
      ['an empty string', ''],
      ['blank', '   '],
    ] as const) {
      it(`${field} ${label} names ${field}, with every earlier field present and every later one missing`, async () => {
        const body: Record<string, unknown> = {};
        const complete = full();
        for (const earlier of HEARTBEAT_REQUIRED_FIELDS.slice(0, i)) body[earlier] = complete[earlier];
        if (value !== undefined) body[field] = value;
        const res = await heartbeat(key, body);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error: `Missing required field: ${field}` });
      });

      it(`${field} ${label} names ${field} when it is the only problem`, async () => {
        const body = full();
        if (value === undefined) delete body[field];
        else body[field] = value;
        const res = await heartbeat(key, body);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error: `Missing required field: ${field}` });
      });
    }
  });

  it('a missing field is reported before an earlier field of the wrong type', async () => {
    const res = await heartbeat(key, { agent_id: 42, version: '1.0' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Missing required field: timestamp' });
  });

  it('uptime_seconds 0 passes (the debug tool sends 0)', async () => {
    const id = newAgentId();
    const res = await heartbeat(key, beat(id, { uptime_seconds: 0 }));
    expect(res.status).toBe(200);
    expect((await agentRow(id))!['uptime_seconds']).toBe(0);
  });

  it.each([
    ['agent_id', 42],
    ['agent_id', '../etc/passwd'],
    ['agent_id', '-svcd'],
    ['agent_id', 'x'.repeat(129)],
    ['version', 3],
    ['version', 'v'.repeat(65)],
    ['version', '4.2.3\u0000'],
    ['version', '4.2\n3'],
    ['timestamp', 'yesterday'],
    ['timestamp', 1717243200],
    ['timestamp', '2025-13-45T00:00:00Z'],
    ['timestamp', '2025-02-30T00:00:00Z'],
    ['timestamp', '2025-02-29T00:00:00Z'],
    ['timestamp', '2025-06-01T24:00:00Z'],
    ['timestamp', '2025-06-01 12:00:00Z'],
    ['timestamp', '2025-06-01'],
    ['status', true],
    ['status', 'running\u0000'],
    ['uptime_seconds', '12'],
    ['uptime_seconds', -1],
    ['uptime_seconds', true],
    ['schedules', { a: 1 }],
    ['schedules', 'none'],
    ['schedules', [{ config: 'nul\u0000.conf' }]],
    ['system_info', ['x']],
    ['system_info', 'host'],
    ['system_info', { hostname: 'a\u0000b' }],
    ['system_info', { 'k\u0000': 1 }],
    ['client_id', 42],
    ['client_id', '../other'],
  ])('%s = %j is a 400 "Invalid field: %s ..."', async (field, value) => {
    const id = newAgentId();
    const res = await heartbeat(key, beat(id, { [field]: value }));
    expect(res.status).toBe(400);
    // A NUL is refused by the edge rule for every route, with its own message.
    expect(res.body.error).toMatch(
      new RegExp(`^(Invalid field: ${field} |Invalid body: field (name )?contains a NUL character)`),
    );
    expect(Object.keys(res.body)).toEqual(['error']);
    expect(await agentRow(id)).toBeUndefined();
  });

  it.each([
    ['2025-06-01T12:00:00Z', '2025-06-01T12:00:00.000Z'],
    ['2025-06-01T12:00:00.123456Z', '2025-06-01T12:00:00.123Z'],
    ['2025-06-01T12:00:00+05:30', '2025-06-01T06:30:00.000Z'],
    ['2025-06-01T12:00:00-0200', '2025-06-01T14:00:00.000Z'],
    ['2024-02-29T23:59:59Z', '2024-02-29T23:59:59.000Z'],
    // No offset: taken as UTC, whatever the portal's time zone.
    ['2025-06-01T12:00:00', '2025-06-01T12:00:00.000Z'],
  ])('timestamp %s is stored as %s', async (timestamp, stored) => {
    const id = newAgentId('ts');
    expect((await heartbeat(key, beat(id, { timestamp }))).status).toBe(200);
    expect(((await agentRow(id))!['sent_at'] as Date).toISOString()).toBe(stored);
  });

  it('refuses telemetry nested deeper than 32 levels and larger than 64 KiB', async () => {
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 40; i++) deep = { d: deep };
    const nested = await heartbeat(key, beat(newAgentId(), { system_info: deep }));
    expect(nested.status).toBe(400);
    expect(nested.body).toEqual({ error: 'Invalid field: system_info is nested too deeply' });
    const big = await heartbeat(key, beat(newAgentId(), { system_info: { blob: 'x'.repeat(70_000) } }));
    expect(big.status).toBe(400);
    expect(big.body).toEqual({ error: 'Invalid field: system_info is too large' });
  });

  it('a body that is not JSON is a 400', async () => {
    const res = await http(portal.url, 'POST', '/api/health', {
      headers: { ...withKey(key), 'content-type': 'application/json' },
      body: '{"agent_id":',
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Request body is not valid JSON' });
  });
});

describe('POST /api/health: authentication', () => {
  it('without x-api-key is a 403, before the body is looked at', async () => {
    const res = await http(portal.url, 'POST', '/api/health', { json: {} });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'Missing API key' });
  });

  it('an unknown key is a 403 Invalid API key', async () => {
    const res = await heartbeat(`svc_biz_${'0'.repeat(64)}`, beat(newAgentId()));
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'Invalid API key' });
  });

  it('a JWT in Authorization is a plain 401', async () => {
    const res = await http(portal.url, 'POST', '/api/health', {
      headers: { authorization: `Bearer ${admin}` },
      json: beat(newAgentId()),
    });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Unauthorized' });
  });
});

describe('POST /api/health: registration and upsert', () => {
  let biz: LicenseFixture;
  beforeAll(async () => {
    biz = await createLicense(portal, { tier: 'business' });
  });

  it("the first heartbeat registers the agent under the key's client and audits agent_first_seen once", async () => {
    const id = newAgentId('first');
    const schedules = [
      {
        config: 'nightly.conf',
        schedule_id: 'sched_0123456789ab',
        last_run: null,
        last_status: 'none',
        next_run: '2025-06-02T03:00:00Z',
        retry_count: 0,
      },
    ];
    const systemInfo = { hostname: 'scanner-1', os: 'Debian 12', cpu_count: 4, disk: { free_gb: 12.5 } };
    const seenBefore = events.length;
    const res = await heartbeat(biz.key, beat(id, { schedules, system_info: systemInfo, client_id: 'someone-else' }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, received_at: clock.now().toISOString(), commands: [] });

    const row = await agentRow(id);
    expect(row).toMatchObject({
      agent_id: id,
      client_id: biz.record.client_id, // The key's client, never the body's
      license_id: biz.record.id,
      key_tier: 'business',
      version: '4.2.3',
      status: 'running',
      uptime_seconds: 120,
      schedules,
      system_info: systemInfo,
      deregistered_at: null,
    });
    expect((row!['sent_at'] as Date).toISOString()).toBe('2025-06-01T12:00:00.000Z');
    expect((row!['received_at'] as Date).toISOString()).toBe(clock.now().toISOString());
    expect((row!['first_seen_at'] as Date).toISOString()).toBe(clock.now().toISOString());

    const audit = await auditFor(id, 'agent_first_seen');
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor: id, client_id: biz.record.client_id, session_id: null });
    expect(audit[0]?.['data']).toMatchObject({
      agent_id: id,
      client_id: biz.record.client_id,
      version: '4.2.3',
      license_id: biz.record.id,
      tier: 'business',
    });
    await portal.ctx.events.drain();
    const published = events
      .slice(seenBefore)
      .filter((e) => e.event_type === 'agent_first_seen' && e.data['agent_id'] === id);
    expect(published).toHaveLength(1);
    expect(published[0]?.actor).toBe(id);
  });

  it('a later heartbeat updates the stored view and is not audited again; telemetry absent on older daemons is stored as null', async () => {
    const id = newAgentId('upsert');
    const first = await heartbeat(
      biz.key,
      beat(id, { schedules: [{ config: 'a.conf' }], system_info: { hostname: 'h1' } }),
    );
    expect(first.status).toBe(200);
    const firstSeen = (await agentRow(id))?.['first_seen_at'] as Date;

    clock.advance(300_000);
    const second = await heartbeat(
      biz.key,
      beat(id, { version: '4.3.0', status: 'degraded', uptime_seconds: 420.5, timestamp: '2025-06-01T12:05:00.000Z' }),
    );
    expect(second.status).toBe(200);
    expect(second.body).toEqual({ success: true, received_at: clock.now().toISOString(), commands: [] });

    const row = await agentRow(id);
    expect(row).toMatchObject({
      version: '4.3.0',
      status: 'degraded',
      uptime_seconds: 420.5,
      schedules: null,
      system_info: null,
      client_id: biz.record.client_id,
    });
    expect((row!['sent_at'] as Date).toISOString()).toBe('2025-06-01T12:05:00.000Z');
    expect((row!['received_at'] as Date).toISOString()).toBe(clock.now().toISOString());
    expect((row!['first_seen_at'] as Date).getTime()).toBe(firstSeen.getTime());
    const { rows } = await db.query('SELECT count(*)::int AS n FROM agents WHERE agent_id = $1', [id]);
    expect(rows[0].n).toBe(1);

    const third = await heartbeat(biz.key, beat(id, { system_info: { hostname: 'h2' } }));
    expect(third.status).toBe(200);
    expect((await agentRow(id))!['system_info']).toEqual({ hostname: 'h2' });
    expect(await auditFor(id, 'agent_first_seen')).toHaveLength(1);
  });

  it("a license key's heartbeat is never refused over the client_id it ignores", async () => {
    for (const clientId of ['Acme Corp', 42, { nested: true }]) {
      const id = newAgentId('ign');
      const res = await heartbeat(biz.key, beat(id, { client_id: clientId }));
      expect(res.status, JSON.stringify(clientId)).toBe(200);
      expect((await agentRow(id))!['client_id']).toBe(biz.record.client_id);
    }
  });

  it('another key of the same client may send heartbeats for the agent; the agent stays with the key that registered it', async () => {
    const id = newAgentId('samecl');
    expect((await heartbeat(biz.key, beat(id))).status).toBe(200);
    const second = await createLicense(portal, { tier: 'msp', client_id: biz.record.client_id });
    const res = await heartbeat(second.key, beat(id, { version: '9.9.9' }));
    expect(res.status).toBe(200);
    // The tier recorded is the registering key's, not the last heartbeat's.
    expect(await agentRow(id)).toMatchObject({
      version: '9.9.9',
      client_id: biz.record.client_id,
      license_id: biz.record.id,
      key_tier: 'business',
    });
  });

  it("another client's key using the same agent id registers its own agent; the first is untouched", async () => {
    const id = newAgentId('other');
    expect((await heartbeat(biz.key, beat(id))).status).toBe(200);
    const other = await createLicense(portal, { tier: 'business' });
    const res = await heartbeat(other.key, beat(id, { version: '6.6.6', client_id: biz.record.client_id }));
    expect(res.status).toBe(200);
    expect(await agentRowOf(biz.record.client_id, id)).toMatchObject({ version: '4.2.3', license_id: biz.record.id });
    expect(await agentRowOf(other.record.client_id, id)).toMatchObject({
      version: '6.6.6',
      license_id: other.record.id,
    });
    expect((await auditFor(id, 'agent_first_seen')).map((e) => e['client_id'])).toEqual([
      biz.record.client_id,
      other.record.client_id,
    ]);
  });

  it('the legacy key keeps the client_id the daemon reports, and follows it on later heartbeats', async () => {
    const id = newAgentId('legacy');
    const client = uniqueClientId('legacy');
    expect((await heartbeat(LEGACY_KEY, beat(id, { client_id: client }))).status).toBe(200);
    expect(await agentRow(id)).toMatchObject({ client_id: client, license_id: null, key_tier: 'msp' });
    const audit = await auditFor(id, 'agent_first_seen');
    expect(audit[0]).toMatchObject({ client_id: client, actor: id });

    // A heartbeat without client_id keeps it; a new one replaces it.
    expect((await heartbeat(LEGACY_KEY, beat(id))).status).toBe(200);
    expect((await agentRow(id))!['client_id']).toBe(client);
    const moved = uniqueClientId('moved');
    expect((await heartbeat(LEGACY_KEY, beat(id, { client_id: moved }))).status).toBe(200);
    expect((await agentRow(id))!['client_id']).toBe(moved);

    const none = newAgentId('legacy');
    expect((await heartbeat(LEGACY_KEY, beat(none))).status).toBe(200);
    // Stored in the legacy key's unnamed namespace '' (the key column cannot be null), shown as null.
    expect((await agentRow(none))?.['client_id']).toBe('');
    const fleet = await http(portal.url, 'GET', `/api/health?agents=true&limit=10000`, { headers: withToken(admin) });
    expect(fleet.body.agents.find((a: { agent_id: string }) => a.agent_id === none)).toMatchObject({ client_id: null });
  });

  it('a legacy agent with pending commands or memberships does not move to another client_id (409); nothing follows it', async () => {
    const id = newAgentId('move');
    const from = uniqueClientId('from');
    const to = uniqueClientId('to');
    expect((await heartbeat(LEGACY_KEY, beat(id, { client_id: from }))).status).toBe(200);
    const q = await queue({ agent_id: id, command_type: 'restart' });
    expect(q.status).toBe(201);
    const group = `mv-${randomBytes(3).toString('hex')}`;
    expect(
      (
        await http(portal.url, 'POST', '/api/agent-groups', {
          headers: withToken(admin),
          json: { agent_id: id, group_name: group },
        })
      ).status,
    ).toBe(201);

    const moved = await heartbeat(LEGACY_KEY, beat(id, { client_id: to }));
    expect(moved.status).toBe(409);
    expect(moved.body.error).toMatch(/^Agent has commands or group memberships under its current client/);
    expect(await agentRowOf(to, id)).toBeUndefined();
    expect(await agentRowOf(from, id)).toMatchObject({ license_id: null });
    const { rows: cmds } = await db.query('SELECT client_id, status FROM agent_commands WHERE agent_id = $1', [id]);
    expect(cmds).toEqual([{ client_id: from, status: 'pending' }]);
    const { rows: groups } = await db.query('SELECT client_id, group_name FROM agent_groups WHERE agent_id = $1', [id]);
    expect(groups).toEqual([{ client_id: from, group_name: group }]);
    // Under its own client it still works, and gets its command.
    const stayed = await heartbeat(LEGACY_KEY, beat(id, { client_id: from }));
    expect(stayed.body.commands.map((c: { id: number }) => c.id)).toEqual([q.body.commands[0].id]);
  });

  it('concurrent first heartbeats of one legacy agent all succeed and register it once', async () => {
    for (let round = 0; round < 10; round++) {
      const id = newAgentId('lrace');
      const client = uniqueClientId('lrace');
      const results = await Promise.all(
        Array.from({ length: 6 }, () => heartbeat(LEGACY_KEY, beat(id, { client_id: client }))),
      );
      expect(results.map((r) => r.status)).toEqual(Array(6).fill(200));
      expect(await auditFor(id, 'agent_first_seen')).toHaveLength(1);
    }
  });

  it('the legacy key never moves or acts for an agent that a license key registered', async () => {
    const id = newAgentId('bound');
    expect((await heartbeat(biz.key, beat(id))).status).toBe(200);
    // Under another client_id it is another agent (the legacy key's own).
    expect((await heartbeat(LEGACY_KEY, beat(id, { client_id: 'elsewhere' }))).status).toBe(200);
    expect(await agentRowOf(biz.record.client_id, id)).toMatchObject({ license_id: biz.record.id, version: '4.2.3' });
    expect(await agentRowOf('elsewhere', id)).toMatchObject({ license_id: null });
    // Naming the license agent's client: refused, and the legacy agent does not move onto it.
    const res = await heartbeat(LEGACY_KEY, beat(id, { client_id: biz.record.client_id, version: '6.6.6' }));
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'Agent is registered with a license key: the legacy key cannot act for it' });
    expect(await agentRowOf(biz.record.client_id, id)).toMatchObject({ license_id: biz.record.id, version: '4.2.3' });
    expect(await agentRowOf('elsewhere', id)).toMatchObject({ license_id: null, version: '4.2.3' });
  });

  it('a deregistered agent gets 403 "Agent unregistered ..." until it is re-enabled', async () => {
    const id = newAgentId('dereg');
    expect((await heartbeat(biz.key, beat(id))).status).toBe(200);
    expect((await agentAction(id, 'deregister')).status).toBe(200);

    const res = await heartbeat(biz.key, beat(id, { version: '5.0.0' }));
    expect(res.status).toBe(403);
    expect(res.body.error).toMatch(/^Agent unregistered/);
    expect(Object.keys(res.body)).toEqual(['error']);
    expect((await agentRow(id))!['version']).toBe('4.2.3');
    // The legacy key naming its client is refused too (a license agent), and it is not treated as a new agent.
    expect((await heartbeat(LEGACY_KEY, beat(id, { client_id: biz.record.client_id }))).status).toBe(403);
    expect(await auditFor(id, 'agent_first_seen')).toHaveLength(1);

    expect((await agentAction(id, 'reenable')).status).toBe(200);
    const back = await heartbeat(biz.key, beat(id, { version: '5.0.0' }));
    expect(back.status).toBe(200);
    expect((await agentRow(id))!['version']).toBe('5.0.0');
  });
});

describe('POST /api/health: the agent limit', () => {
  it('the third new agent of a key with max_agents 2 is refused; existing agents keep working; a deregistered agent frees a slot', async () => {
    const lic = await createLicense(portal, { tier: 'business', max_agents: 2 });
    const [a1, a2, a3] = [newAgentId('lim'), newAgentId('lim'), newAgentId('lim')];
    expect((await heartbeat(lic.key, beat(a1))).status).toBe(200);
    expect((await heartbeat(lic.key, beat(a2))).status).toBe(200);

    const refused = await heartbeat(lic.key, beat(a3));
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: 'Agent limit reached (2)' });
    expect(await agentRow(a3)).toBeUndefined();
    expect(await auditFor(a3, 'agent_first_seen')).toHaveLength(0);

    expect((await heartbeat(lic.key, beat(a1, { uptime_seconds: 999 }))).status).toBe(200);
    expect((await heartbeat(lic.key, beat(a2))).status).toBe(200);
    expect((await agentRow(a1))?.['uptime_seconds']).toBe(999);

    // Another key of the same client has its own count.
    const sibling = await createLicense(portal, { tier: 'business', client_id: lic.record.client_id, max_agents: 1 });
    expect((await heartbeat(sibling.key, beat(newAgentId('lim')))).status).toBe(200);

    expect((await agentAction(a1, 'deregister')).status).toBe(200);
    const admitted = await heartbeat(lic.key, beat(a3));
    expect(admitted.status).toBe(200);
    expect(await agentRow(a3)).toMatchObject({ license_id: lic.record.id });
    expect((await heartbeat(lic.key, beat(newAgentId('lim')))).body).toEqual({ error: 'Agent limit reached (2)' });
  });

  it('concurrent first heartbeats cannot overshoot the limit', async () => {
    const lic = await createLicense(portal, { tier: 'business', max_agents: 3 });
    const results = await Promise.all(Array.from({ length: 8 }, () => heartbeat(lic.key, beat(newAgentId('race')))));
    expect(results.filter((r) => r.status === 200)).toHaveLength(3);
    expect(results.filter((r) => r.status === 403).map((r) => r.body)).toEqual(
      Array(5).fill({ error: 'Agent limit reached (3)' }),
    );
    const { rows } = await db.query('SELECT count(*)::int AS n FROM agents WHERE license_id = $1', [lic.record.id]);
    expect(rows[0].n).toBe(3);
  });

  it('concurrent first heartbeats of one agent register it once', async () => {
    const lic = await createLicense(portal, { tier: 'business' });
    const id = newAgentId('same');
    const results = await Promise.all(Array.from({ length: 6 }, () => heartbeat(lic.key, beat(id))));
    expect(results.map((r) => r.status)).toEqual(Array(6).fill(200));
    expect(await auditFor(id, 'agent_first_seen')).toHaveLength(1);
  });

  // A heartbeat whose UPDATE ran before a sibling's registration committed
  // was answered 403 "Agent belongs to another client". Many rounds, so the interleaving occurs.
  it('concurrent first heartbeats of one agent all succeed, round after round, also at the edge of the agent limit', async () => {
    const lic = await createLicense(portal, { tier: 'business' });
    const edge = await createLicense(portal, { tier: 'business', client_id: lic.record.client_id, max_agents: 30 });
    const statuses: number[][] = [];
    const ids: string[] = [];
    for (let round = 0; round < 30; round++) {
      const id = newAgentId(`r${round}`);
      ids.push(id);
      // Half the rounds through a key with max_agents: a sibling's registration must not count against its own agent.
      const key = round % 2 === 0 ? lic.key : edge.key;
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => heartbeat(key, beat(id, { uptime_seconds: i }))),
      );
      statuses.push(results.map((r) => r.status));
    }
    expect(statuses).toEqual(Array(30).fill(Array(6).fill(200)));
    const { rows } = await db.query(
      'SELECT agent_id, count(*)::int AS n FROM agents WHERE agent_id = ANY($1) GROUP BY agent_id',
      [ids],
    );
    expect(rows).toHaveLength(30);
    expect(rows.every((r) => r.n === 1)).toBe(true);
    const { rows: firstSeen } = await db.query(
      `SELECT count(*)::int AS n FROM audit_events WHERE event_type = 'agent_first_seen' AND data->>'agent_id' = ANY($1)`,
      [ids],
    );
    expect(firstSeen[0].n).toBe(30);
    const { rows: counted } = await db.query('SELECT count(*)::int AS n FROM agents WHERE license_id = $1', [
      edge.record.id,
    ]);
    expect(counted[0].n).toBe(15);
  });

  it('concurrent first heartbeats of one agent under a key with one free slot: all succeed, and the next new agent is refused', async () => {
    const lic = await createLicense(portal, { tier: 'business', max_agents: 1 });
    for (let round = 0; round < 10; round++) {
      const id = newAgentId('slot');
      const results = await Promise.all(Array.from({ length: 6 }, () => heartbeat(lic.key, beat(id))));
      expect(results.map((r) => r.status)).toEqual(Array(6).fill(200));
      expect(await auditFor(id, 'agent_first_seen')).toHaveLength(1);
      expect((await heartbeat(lic.key, beat(newAgentId('over')))).body).toEqual({ error: 'Agent limit reached (1)' });
      expect((await agentAction(id, 'deregister')).status).toBe(200);
    }
  });
});

describe('POST /api/health: one agent id under two clients', () => {
  it("two clients' agents with the same id (a default host name) both heartbeat and each gets only its own commands", async () => {
    const a = await createLicense(portal, { tier: 'business' });
    const b = await createLicense(portal, { tier: 'msp' });
    const id = newAgentId('raspberrypi');
    expect((await heartbeat(a.key, beat(id))).status).toBe(200);
    const second = await heartbeat(b.key, beat(id, { version: '5.0.0' }));
    expect(second.status).toBe(200);
    expect(second.body.commands).toEqual([]);

    // The admin must say which one.
    const ambiguous = await queue({ agent_id: id, command_type: 'restart' });
    expect(ambiguous.status).toBe(409);
    expect(ambiguous.body).toEqual({
      error: 'Agent id is ambiguous: it exists under several clients; name one with client_id',
      client_ids: [a.record.client_id, b.record.client_id].sort(),
    });
    const forA = await queue({ agent_id: id, client_id: a.record.client_id, command_type: 'restart' });
    const forB = await queue({
      agent_id: id,
      client_id: b.record.client_id,
      command_type: 'set_log_level',
      payload: { level: 'debug' },
    });
    expect([forA.status, forB.status]).toEqual([201, 201]);
    const { rows } = await db.query(
      'SELECT id::int AS id, client_id FROM agent_commands WHERE agent_id = $1 ORDER BY id',
      [id],
    );
    expect(rows).toEqual([
      { id: forA.body.commands[0].id, client_id: a.record.client_id },
      { id: forB.body.commands[0].id, client_id: b.record.client_id },
    ]);

    const gotB = await heartbeat(b.key, beat(id));
    expect(gotB.body.commands.map((c: { id: number; command_type: string }) => [c.id, c.command_type])).toEqual([
      [forB.body.commands[0].id, 'set_log_level'],
    ]);
    const gotA = await heartbeat(a.key, beat(id));
    expect(gotA.body.commands.map((c: { id: number; command_type: string }) => [c.id, c.command_type])).toEqual([
      [forA.body.commands[0].id, 'restart'],
    ]);
    expect(await agentRowOf(a.record.client_id, id)).toMatchObject({ version: '4.2.3', license_id: a.record.id });
    expect(await agentRowOf(b.record.client_id, id)).toMatchObject({ version: '4.2.3', license_id: b.record.id });

    // Deregistering one leaves the other heartbeating.
    expect(
      (
        await http(portal.url, 'PATCH', '/api/agents', {
          headers: withToken(admin),
          json: { agent_id: id, client_id: a.record.client_id, action: 'deregister' },
        })
      ).status,
    ).toBe(200);
    expect((await heartbeat(a.key, beat(id))).status).toBe(403);
    expect((await heartbeat(b.key, beat(id))).status).toBe(200);
  });
});

describe('POST /api/health: command delivery', () => {
  let biz: LicenseFixture;
  beforeAll(async () => {
    biz = await createLicense(portal, { tier: 'business' });
  });

  async function commandRows(agentId: string) {
    const { rows } = await db.query(
      'SELECT id::int AS id, status, sent_at FROM agent_commands WHERE agent_id = $1 ORDER BY id',
      [agentId],
    );
    return rows as { id: number; status: string; sent_at: Date | null }[];
  }

  it(`answers at most ${MAX_COMMANDS_PER_HEARTBEAT} pending commands by priority, then oldest first; they become sent and are not delivered again`, async () => {
    const id = newAgentId('cmds');
    expect((await heartbeat(biz.key, beat(id))).status).toBe(200);

    // created_at deliberately out of id order, so "oldest first" is tested, not "lowest id first".
    const base = clock.now().getTime();
    const queued: { id: number; priority: number; created: number }[] = [];
    for (let i = 0; i < 25; i++) {
      const created = base + ((i * 7) % 25) * 1000;
      clock.set(new Date(created));
      const priority = [0, 4, 8, 10, 4][i % 5] as number;
      const res = await queue({ agent_id: id, command_type: 'set_log_level', payload: { level: 'info' }, priority });
      expect(res.status).toBe(201);
      queued.push({ id: res.body.commands[0].id, priority, created });
    }
    clock.set(new Date(base + 60_000));
    const expected = [...queued].sort((a, b) => b.priority - a.priority || a.created - b.created).map((q) => q.id);

    const first = await heartbeat(biz.key, beat(id));
    expect(first.status).toBe(200);
    expect(first.body.commands).toHaveLength(20);
    expect(first.body.commands.map((c: { id: number }) => c.id)).toEqual(expected.slice(0, 20));
    const sample = first.body.commands[0];
    expect(Object.keys(sample).sort()).toEqual([
      'command_type',
      'created_at',
      'created_by',
      'id',
      'payload',
      'priority',
    ]);
    const top = queued.find((q) => q.id === sample.id);
    expect(sample).toEqual({
      id: top?.id,
      command_type: 'set_log_level',
      payload: { level: 'info' },
      priority: 10,
      created_by: ADMIN_EMAIL,
      created_at: new Date(top?.created ?? 0).toISOString(),
    });

    const rows = await commandRows(id);
    const sent = new Set(expected.slice(0, 20));
    for (const row of rows) {
      expect(row.status, `command ${row.id}`).toBe(sent.has(row.id) ? 'sent' : 'pending');
      if (sent.has(row.id)) expect(row.sent_at?.toISOString()).toBe(clock.now().toISOString());
      else expect(row.sent_at).toBeNull();
    }

    const second = await heartbeat(biz.key, beat(id));
    expect(second.body.commands.map((c: { id: number }) => c.id)).toEqual(expected.slice(20));
    const third = await heartbeat(biz.key, beat(id));
    expect(third.body).toEqual({ success: true, received_at: clock.now().toISOString(), commands: [] });
    expect((await commandRows(id)).every((r) => r.status === 'sent')).toBe(true);
  });

  it('orders by the stored created_at to the microsecond, not by id', async () => {
    const id = newAgentId('micro');
    expect((await heartbeat(biz.key, beat(id))).status).toBe(200);
    const { rows } = await db.query(
      `INSERT INTO agent_commands (client_id, agent_id, command_type, payload, priority, created_by, created_at) VALUES
         ((SELECT client_id FROM agents WHERE agent_id = $1), $1, 'restart', '{}', 5, 'test', '2025-01-01T00:00:00.000900Z'),
         ((SELECT client_id FROM agents WHERE agent_id = $1), $1, 'restart', '{}', 5, 'test', '2025-01-01T00:00:00.000100Z'),
         ((SELECT client_id FROM agents WHERE agent_id = $1), $1, 'restart', '{}', 5, 'test', '2025-01-01T00:00:00.000500Z')
       RETURNING id::int AS id`,
      [id],
    );
    const [late, early, middle] = rows.map((r) => r.id as number);
    const res = await heartbeat(biz.key, beat(id));
    expect(res.body.commands.map((c: { id: number }) => c.id)).toEqual([early, middle, late]);
  });

  it('equal priority and equal created_at fall back to queue order', async () => {
    const id = newAgentId('ties');
    expect((await heartbeat(biz.key, beat(id))).status).toBe(200);
    const ids: number[] = [];
    for (let i = 0; i < 4; i++)
      ids.push((await queue({ agent_id: id, command_type: 'restart', priority: 3 })).body.commands[0].id);
    const res = await heartbeat(biz.key, beat(id));
    expect(res.body.commands.map((c: { id: number }) => c.id)).toEqual(ids);
  });

  it('concurrent heartbeats of one agent never deliver a command twice', async () => {
    const id = newAgentId('dup');
    expect((await heartbeat(biz.key, beat(id))).status).toBe(200);
    for (let i = 0; i < 30; i++) expect((await queue({ agent_id: id, command_type: 'restart' })).status).toBe(201);
    const results = await Promise.all(Array.from({ length: 5 }, () => heartbeat(biz.key, beat(id))));
    const delivered = results.flatMap((r) => r.body.commands.map((c: { id: number }) => c.id));
    expect(delivered).toHaveLength(30);
    expect(new Set(delivered).size).toBe(30);
  });

  it('a professional key registers agents but never receives commands', async () => {
    const pro = await createLicense(portal, { tier: 'professional' });
    const id = newAgentId('pro');
    const first = await heartbeat(pro.key, beat(id));
    expect(first.status).toBe(200);
    expect(first.body.commands).toEqual([]);
    expect(await agentRow(id)).toMatchObject({
      key_tier: 'professional',
      client_id: pro.record.client_id,
      license_id: pro.record.id,
    });

    const refused = await queue({ agent_id: id, command_type: 'restart' });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: 'Insufficient permissions for agent:commands' });
    expect(await commandRows(id)).toEqual([]);

    // Even a command that is somehow pending stays undelivered.
    await db.query(
      `INSERT INTO agent_commands (client_id, agent_id, command_type, payload, priority, created_by) VALUES ($2, $1, 'restart', '{}', 5, 'test')`,
      [id, pro.record.client_id],
    );
    const again = await heartbeat(pro.key, beat(id));
    expect(again.status).toBe(200);
    expect(again.body.commands).toEqual([]);
    expect((await commandRows(id)).map((r) => r.status)).toEqual(['pending']);
  });

  it("a business agent heartbeating with its client's professional key gets no commands, which stay pending", async () => {
    const pro = await createLicense(portal, { tier: 'professional', client_id: biz.record.client_id });
    const id = newAgentId('mixed');
    expect((await heartbeat(biz.key, beat(id))).status).toBe(200);
    expect((await queue({ agent_id: id, command_type: 'restart' })).status).toBe(201);
    const res = await heartbeat(pro.key, beat(id));
    expect(res.status).toBe(200);
    expect(res.body.commands).toEqual([]);
    expect((await commandRows(id)).map((r) => r.status)).toEqual(['pending']);
  });

  it('the legacy key receives commands', async () => {
    const id = newAgentId('legcmd');
    expect((await heartbeat(LEGACY_KEY, beat(id, { client_id: uniqueClientId() }))).status).toBe(200);
    const q = await queue({ agent_id: id, command_type: 'run_scan', payload: { targets: '10.0.0.1' }, priority: 7 });
    expect(q.status).toBe(201);
    const res = await heartbeat(LEGACY_KEY, beat(id));
    expect(res.body.commands).toEqual([
      {
        id: q.body.commands[0].id,
        command_type: 'run_scan',
        payload: { targets: '10.0.0.1' },
        priority: 7,
        created_by: ADMIN_EMAIL,
        created_at: q.body.commands[0].created_at,
      },
    ]);
  });
});

describe('the legacy shared key is logged at warning level on every use', () => {
  it('heartbeat, poll and status report each log one warning with the route, never the key', async () => {
    const lines: string[] = [];
    const logged = await startTestPortal({
      env: { SVC_LOG_LEVEL: 'warn' },
      logDestination: { write: (line: string) => void lines.push(line) },
    });
    try {
      const id = newAgentId('warn');
      const body = beat(id, { client_id: uniqueClientId('legacy') });
      expect((await http(logged.url, 'POST', '/api/health', { headers: withKey(LEGACY_KEY), json: body })).status).toBe(
        200,
      );
      expect(
        (await http(logged.url, 'GET', `/api/agent-commands?agent_id=${id}`, { headers: withKey(LEGACY_KEY) })).status,
      ).toBe(200);
      expect(
        (
          await http(logged.url, 'PATCH', '/api/agent-commands', {
            headers: withKey(LEGACY_KEY),
            json: { command_id: 1, agent_id: id, status: 'acked' },
          })
        ).status,
      ).toBe(404);
      // A license key is not logged.
      const lic = await createLicense(logged, { tier: 'business' });
      expect(
        (await http(logged.url, 'POST', '/api/health', { headers: withKey(lic.key), json: beat(newAgentId('lic')) }))
          .status,
      ).toBe(200);

      const warnings = lines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l['msg'] === 'legacy shared key used');
      expect(warnings.map((w) => [w['level'], w['route']])).toEqual([
        [40, 'POST /api/health'],
        [40, 'GET /api/agent-commands'],
        [40, 'PATCH /api/agent-commands'],
      ]);
      expect(lines.join('\n')).not.toContain(LEGACY_KEY);
    } finally {
      await logged.close();
    }
  });
});
