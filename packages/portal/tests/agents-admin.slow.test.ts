import type pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DomainEvent } from '../src/events/bus.ts';
import {
  createLicense,
  createScopedUser,
  FakeClock,
  newAgentId,
  uniqueClientId,
  type LicenseFixture,
  type ScopedUser,
} from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { ADMIN_EMAIL, LEGACY_KEY, type TestPortal } from '@svc/test-support/portal';
import { useFleetPortal } from '@svc/test-support/fleet-portal';

/**
 * The administrator's side of the fleet: GET /api/health?agents=true (stale
 * threshold 600 s; health:agents is msp only) and PATCH /api/agents (docs/api.md#agents-and-commands:
 * deregister, reenable, purge).
 */

let portal: TestPortal;
let db: pg.Client;
let admin: string;
// The fake clock starts at the real time and only moves forward within a token's hour.
const clock = new FakeClock();
const events: DomainEvent[] = [];
useFleetPortal((f) => ({ portal, db, admin } = f), { clock, events });

function beat(agentId: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    agent_id: agentId,
    version: '4.2.3',
    timestamp: '2025-06-01T11:59:58.000Z',
    status: 'running',
    uptime_seconds: 3600,
    ...extra,
  };
}

async function register(key: string, agentId: string, extra: Record<string, unknown> = {}): Promise<void> {
  const res = await http(portal.url, 'POST', '/api/health', { headers: withKey(key), json: beat(agentId, extra) });
  expect(res.status, res.text).toBe(200);
}

const fleet = (token?: string, query = 'agents=true') =>
  http(portal.url, 'GET', `/api/health?${query}`, { headers: token === undefined ? {} : withToken(token) });
const agentAction = (agentId: string, action: string, token = admin) =>
  http(portal.url, 'PATCH', '/api/agents', { headers: withToken(token), json: { agent_id: agentId, action } });

async function auditFor(agentId: string, type: string) {
  const { rows } = await db.query(
    `SELECT * FROM audit_events WHERE event_type = $1 AND data->>'agent_id' = $2 ORDER BY id`,
    [type, agentId],
  );
  return rows as Record<string, any>[];
}

async function count(table: string, agentId: string): Promise<number> {
  const { rows } = await db.query(`SELECT count(*)::int AS n FROM ${table} WHERE agent_id = $1`, [agentId]);
  return rows[0].n as number;
}

describe('GET /api/health?agents=true (the fleet view)', () => {
  let msp: LicenseFixture;
  let biz: LicenseFixture;
  beforeAll(async () => {
    msp = await createLicense(portal, { tier: 'msp' });
    biz = await createLicense(portal, { tier: 'business' });
  });

  it('shows an admin every registered agent with the stored view, is_stale and age_seconds', async () => {
    const start = clock.now();
    const id = newAgentId('view');
    const schedules = [
      {
        config: 'weekly.conf',
        schedule_id: 'sched_aaaaaaaaaaaa',
        last_run: '2025-05-31T03:00:00Z',
        last_status: 'success',
        next_run: '2025-06-07T03:00:00Z',
        retry_count: 0,
      },
    ];
    await register(msp.key, id, {
      schedules,
      system_info: {
        hostname: 'edge-1',
        mem_mb: 2048,
        disks: [{ mount: '/', free_gb: 3.5 }],
        net: { ipv4: ['10.0.0.5'] },
      },
    });
    const other = newAgentId('view');
    await register(biz.key, other);

    const res = await fleet(admin);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['agents', 'counts', 'next_cursor', 'stale_threshold_seconds']);
    expect(res.body.stale_threshold_seconds).toBe(600);
    expect(res.body.next_cursor).toBeNull();
    const mine = res.body.agents.find((a: { agent_id: string }) => a.agent_id === id);
    expect(mine).toEqual({
      agent_id: id,
      version: '4.2.3',
      timestamp: '2025-06-01T11:59:58.000Z',
      status: 'running',
      uptime_seconds: 3600,
      client_id: msp.record.client_id,
      schedules,
      system_info: {
        hostname: 'edge-1',
        mem_mb: 2048,
        disks: [{ mount: '/', free_gb: 3.5 }],
        net: { ipv4: ['10.0.0.5'] },
      },
      received_at: start.toISOString(),
      first_seen_at: start.toISOString(),
      deregistered_at: null,
      is_stale: false,
      age_seconds: 0,
      hostname: 'edge-1',
      // Only system_info.ip_addresses names the addresses; other shapes are shown as sent.
      ip_addresses: [],
      running: [],
    });
    expect(res.body.agents.map((a: { agent_id: string }) => a.agent_id)).toContain(other);
    // Agents are listed in agent_id order.
    const ids = res.body.agents.map((a: { agent_id: string }) => a.agent_id);
    expect(ids).toEqual([...ids].sort());
  });

  it('an agent becomes stale when its last heartbeat is more than 600 seconds old', async () => {
    const id = newAgentId('stale');
    await register(msp.key, id);
    const find = async () => (await fleet(admin)).body.agents.find((a: { agent_id: string }) => a.agent_id === id);

    clock.advance(600_000);
    expect(await find()).toMatchObject({ is_stale: false, age_seconds: 600 });
    clock.advance(1_000);
    expect(await find()).toMatchObject({ is_stale: true, age_seconds: 601 });
    clock.advance(59_500);
    expect(await find()).toMatchObject({ is_stale: true, age_seconds: 660 });

    // A new heartbeat makes it fresh again.
    await register(msp.key, id);
    expect(await find()).toMatchObject({ is_stale: false, age_seconds: 0, received_at: clock.now().toISOString() });
  });

  it('hides deregistered agents, and shows them again when re-enabled', async () => {
    const id = newAgentId('hidden');
    await register(msp.key, id);
    const listed = async () => (await fleet(admin)).body.agents.some((a: { agent_id: string }) => a.agent_id === id);
    expect(await listed()).toBe(true);
    expect((await agentAction(id, 'deregister')).status).toBe(200);
    expect(await listed()).toBe(false);
    expect((await agentAction(id, 'reenable')).status).toBe(200);
    expect(await listed()).toBe(true);
  });

  it('pages by agent_id with limit and cursor', async () => {
    const client = uniqueClientId('page');
    const lic = await createLicense(portal, { tier: 'msp', client_id: client });
    const ids = [newAgentId('pg'), newAgentId('pg'), newAgentId('pg')].sort();
    for (const id of ids) await register(lic.key, id);
    const user = await createScopedUser(portal, [client]);
    const first = await fleet(user.token, 'agents=true&limit=2');
    expect(first.body.agents.map((a: { agent_id: string }) => a.agent_id)).toEqual(ids.slice(0, 2));
    expect(first.body.next_cursor).toBe(ids[1]);
    const second = await fleet(user.token, `agents=true&limit=2&cursor=${first.body.next_cursor}`);
    expect(second.body.agents.map((a: { agent_id: string }) => a.agent_id)).toEqual(ids.slice(2));
    expect(second.body.next_cursor).toBeNull();
  });

  it('one agent id under two clients is listed once per client, and a page never ends between them', async () => {
    const [c1, c2, c3] = [uniqueClientId('dup1'), uniqueClientId('dup2'), uniqueClientId('dup3')];
    const keys = await Promise.all([c1, c2, c3].map((client_id) => createLicense(portal, { tier: 'msp', client_id })));
    const [before, twin, after] = [newAgentId('pd'), newAgentId('pd'), newAgentId('pd')].sort() as [
      string,
      string,
      string,
    ];
    await register(keys[0]!.key, before);
    for (const k of keys) await register(k.key, twin);
    await register(keys[2]!.key, after);
    const user = await createScopedUser(portal, [c1, c2, c3]);
    const pairs = (res: { body: { agents: { agent_id: string; client_id: string }[] } }) =>
      res.body.agents.map((a) => [a.agent_id, a.client_id]);
    const first = await fleet(user.token, 'agents=true&limit=2');
    expect(pairs(first)).toEqual([
      [before, c1],
      [twin, c1],
      [twin, c2],
      [twin, c3],
    ]);
    expect(first.body.next_cursor).toBe(twin);
    const second = await fleet(user.token, `agents=true&limit=2&cursor=${twin}`);
    expect(pairs(second)).toEqual([[after, c3]]);
    expect(second.body.next_cursor).toBeNull();
    // A page that ends on the last id has nothing after it.
    const tail = await fleet(user.token, `agents=true&limit=1&cursor=${before}`);
    expect(pairs(tail)).toEqual([
      [twin, c1],
      [twin, c2],
      [twin, c3],
    ]);
    expect(tail.body.next_cursor).toBe(twin);
  });

  describe('filters and counts', () => {
    let clientF: string;
    let clientG: string;
    let user: ScopedUser;
    const ids = { online: '', stale: '', gone: '', old: '', other: '' };
    beforeAll(async () => {
      clientF = uniqueClientId('filt');
      clientG = uniqueClientId('filg');
      const f = await createLicense(portal, { tier: 'msp', client_id: clientF });
      const g = await createLicense(portal, { tier: 'msp', client_id: clientG });
      for (const k of Object.keys(ids) as (keyof typeof ids)[]) ids[k] = newAgentId(k);
      await register(f.key, ids.stale, { system_info: { hostname: 'db-01', ip_addresses: ['10.1.0.9'] } });
      await register(f.key, ids.gone);
      await register(f.key, ids.old, { version: '4.1.0' });
      await register(g.key, ids.other);
      // Time passes: stale and gone stop sending, the others keep beating.
      clock.advance(601_000);
      await register(f.key, ids.online, {
        system_info: { hostname: 'edge-07', ip_addresses: ['10.1.0.7', 'fd00::7', 42] },
      });
      await register(f.key, ids.old, { version: '4.1.0' });
      await register(g.key, ids.other);
      expect((await agentAction(ids.gone, 'deregister')).status).toBe(200);
      const grouped = await http(portal.url, 'POST', '/api/agent-groups', {
        headers: withToken(admin),
        json: { agent_id: ids.online, group_name: 'edge', client_id: clientF },
      });
      expect(grouped.status).toBe(201);
      user = await createScopedUser(portal, [clientF, clientG]);
    });
    const listed = async (query: string) => {
      const res = await fleet(user.token, `agents=true&${query}`);
      expect(res.status, res.text).toBe(200);
      return { ids: res.body.agents.map((a: { agent_id: string }) => a.agent_id), counts: res.body.counts };
    };

    it('answers the host name and addresses from the heartbeat, and counts each state', async () => {
      const res = await fleet(user.token, `agents=true&client_id=${clientF}`);
      const online = res.body.agents.find((a: { agent_id: string }) => a.agent_id === ids.online);
      expect(online).toMatchObject({ hostname: 'edge-07', ip_addresses: ['10.1.0.7', 'fd00::7'], is_stale: false });
      const stale = res.body.agents.find((a: { agent_id: string }) => a.agent_id === ids.stale);
      expect(stale).toMatchObject({ hostname: 'db-01', ip_addresses: ['10.1.0.9'], is_stale: true });
      expect(res.body.agents.map((a: { agent_id: string }) => a.agent_id)).toEqual(
        [ids.online, ids.stale, ids.old].sort(),
      );
      expect(res.body.counts).toEqual({ online: 2, stale: 1, deregistered: 1 });
    });

    it('filters by state, client, group and version; the counts ignore only the state', async () => {
      expect(await listed('state=online')).toEqual({
        ids: [ids.online, ids.old, ids.other].sort(),
        counts: { online: 3, stale: 1, deregistered: 1 },
      });
      expect(await listed('state=stale')).toEqual({
        ids: [ids.stale],
        counts: { online: 3, stale: 1, deregistered: 1 },
      });
      const gone = await fleet(user.token, 'agents=true&state=deregistered');
      expect(gone.body.agents).toHaveLength(1);
      expect(gone.body.agents[0]).toMatchObject({ agent_id: ids.gone, deregistered_at: expect.any(String) });
      expect(await listed(`client_id=${clientG}`)).toEqual({
        ids: [ids.other],
        counts: { online: 1, stale: 0, deregistered: 0 },
      });
      expect(await listed('group=edge')).toEqual({
        ids: [ids.online],
        counts: { online: 1, stale: 0, deregistered: 0 },
      });
      expect(await listed('version=4.1.0&state=online')).toEqual({
        ids: [ids.old],
        counts: { online: 1, stale: 0, deregistered: 0 },
      });
      expect(await listed('group=nobody')).toEqual({ ids: [], counts: { online: 0, stale: 0, deregistered: 0 } });
    });

    it("a client outside the user's scope matches nothing; an admin may name any client", async () => {
      const outside = uniqueClientId('outside');
      expect(await listed(`client_id=${outside}`)).toEqual({
        ids: [],
        counts: { online: 0, stale: 0, deregistered: 0 },
      });
      const res = await fleet(admin, `agents=true&client_id=${clientG}`);
      expect(res.body.agents.map((a: { agent_id: string }) => a.agent_id)).toEqual([ids.other]);
    });

    it('pages a filtered listing by agent_id', async () => {
      const first = await fleet(user.token, `agents=true&client_id=${clientF}&limit=1`);
      const sorted = [ids.online, ids.stale, ids.old].sort();
      expect(first.body.agents.map((a: { agent_id: string }) => a.agent_id)).toEqual(sorted.slice(0, 1));
      const second = await fleet(
        user.token,
        `agents=true&client_id=${clientF}&limit=5&cursor=${first.body.next_cursor}`,
      );
      expect(second.body.agents.map((a: { agent_id: string }) => a.agent_id)).toEqual(sorted.slice(1));
      expect(second.body.next_cursor).toBeNull();
    });

    it.each(['state=gone', 'group=-bad', 'client_id=%20x'])('refuses %s with 400', async (query) => {
      const res = await fleet(user.token, `agents=true&${query}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: expect.any(String) });
    });
  });

  describe('scoped members', () => {
    let clientA: string;
    let clientB: string;
    let agentA: string;
    let agentB: string;
    let agentLegacy: string;
    beforeAll(async () => {
      clientA = uniqueClientId('fa');
      clientB = uniqueClientId('fb');
      agentA = newAgentId('sa');
      agentB = newAgentId('sb');
      agentLegacy = newAgentId('sl');
      // Before A has keys: the legacy key never registers under a client that has them.
      await register(LEGACY_KEY, agentLegacy, { client_id: clientA });
      const a = await createLicense(portal, { tier: 'msp', client_id: clientA });
      const b = await createLicense(portal, { tier: 'business', client_id: clientB });
      await register(a.key, agentA);
      await register(b.key, agentB);
    });

    it("an msp-tier member sees only its clients' agents (also those reported by the legacy key)", async () => {
      const user = await createScopedUser(portal, [clientA]);
      const res = await fleet(user.token);
      expect(res.status).toBe(200);
      expect(res.body.agents.map((x: { agent_id: string }) => x.agent_id).sort()).toEqual([agentA, agentLegacy].sort());
    });

    it('a member of both clients sees both, as long as one of its clients is msp', async () => {
      const user = await createScopedUser(portal, [clientA, clientB]);
      const res = await fleet(user.token);
      expect(res.body.agents.map((x: { agent_id: string }) => x.agent_id).sort()).toEqual(
        [agentA, agentB, agentLegacy].sort(),
      );
    });

    it('a business-tier member is refused: health:agents is msp only', async () => {
      const user = await createScopedUser(portal, [clientB]);
      const res = await fleet(user.token);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'Insufficient permissions for health:agents' });
    });

    it('a member without any licensed client is refused', async () => {
      const user = await createScopedUser(portal, [uniqueClientId('nolic')]);
      const res = await fleet(user.token);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'Insufficient permissions for health:agents' });
    });
  });

  it('needs an identity token: none, a bad one, or a license key are a plain 401', async () => {
    for (const headers of [{}, withToken('not-a-jwt'), withKey(msp.key), withKey(LEGACY_KEY)]) {
      const res = await http(portal.url, 'GET', '/api/health?agents=true', { headers });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'Unauthorized' });
    }
    const inAuthorization = await http(portal.url, 'GET', '/api/health?agents=true', {
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(inAuthorization.status).toBe(401);
    expect(inAuthorization.body).toEqual({ error: 'Unauthorized' });
  });

  it('a repeated agents parameter neither bypasses authentication nor lists agents', async () => {
    const res = await http(portal.url, 'GET', '/api/health?agents=true&agents=true');
    expect(res.status).toBe(400);
    expect(res.body.agents).toBeUndefined();
  });

  it('plain GET /api/health stays public and unchanged, whatever the caller sends', async () => {
    for (const [query, headers] of [
      ['', {}],
      ['', withToken(admin)],
      ['?agents=false', {}],
      ['?_=1717243200', {}],
      ['?agents=yes', {}],
    ] as const) {
      const res = await http(portal.url, 'GET', `/api/health${query}`, { headers });
      expect(res.status, query).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['environment', 'status', 'timestamp', 'version']);
      expect(res.body).toEqual({
        status: 'ok',
        version: portal.ctx.version,
        timestamp: clock.now().toISOString(),
        environment: 'unknown',
      });
    }
  });
});

describe('PATCH /api/agents', () => {
  let biz: LicenseFixture;
  beforeAll(async () => {
    biz = await createLicense(portal, { tier: 'business' });
  });

  async function agentRow(agentId: string) {
    const { rows } = await db.query('SELECT * FROM agents WHERE agent_id = $1', [agentId]);
    return rows[0] as Record<string, any> | undefined;
  }

  it('an agent id under two clients needs client_id (else 409 listing them); a client that does not hold it is a 404', async () => {
    const a = await createLicense(portal, { tier: 'business' });
    const b = await createLicense(portal, { tier: 'business' });
    const id = newAgentId('twin');
    await register(a.key, id);
    await register(b.key, id);
    const res = await agentAction(id, 'deregister');
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      error: 'Agent id is ambiguous: it exists under several clients; name one with client_id',
      client_ids: [a.record.client_id, b.record.client_id].sort(),
    });
    const named = await http(portal.url, 'PATCH', '/api/agents', {
      headers: withToken(admin),
      json: { agent_id: id, client_id: b.record.client_id, action: 'deregister' },
    });
    expect(named.status).toBe(200);
    const { rows } = await db.query(
      'SELECT client_id, deregistered_at IS NOT NULL AS gone FROM agents WHERE agent_id = $1 ORDER BY client_id',
      [id],
    );
    expect(rows).toEqual(
      [
        { client_id: a.record.client_id, gone: false },
        { client_id: b.record.client_id, gone: true },
      ].sort((x, y) => x.client_id.localeCompare(y.client_id)),
    );
    const audit = await auditFor(id, 'agent_deregistered');
    expect(audit.map((e) => e['client_id'])).toEqual([b.record.client_id]);
    // A client that does not hold the id: as for an unknown agent.
    const elsewhere = await http(portal.url, 'PATCH', '/api/agents', {
      headers: withToken(admin),
      json: { agent_id: id, client_id: uniqueClientId('none'), action: 'deregister' },
    });
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body).toEqual({ error: 'Agent not found' });
  });

  it('an unknown agent is a 404 for every action', async () => {
    for (const action of ['deregister', 'reenable', 'purge']) {
      const res = await agentAction(newAgentId('nobody'), action);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Agent not found' });
    }
  });

  it('deregister: sets deregistered_at, drops group memberships, audits and publishes agent_deregistered; a second deregister is a 409', async () => {
    const id = newAgentId('dereg');
    await register(biz.key, id);
    for (const group of ['east', 'lab']) {
      const res = await http(portal.url, 'POST', '/api/agent-groups', {
        headers: withToken(admin),
        json: { agent_id: id, group_name: `${group}-${id}` },
      });
      expect(res.status).toBe(201);
    }
    expect(await count('agent_groups', id)).toBe(2);
    const pending = await http(portal.url, 'POST', '/api/agent-commands', {
      headers: withToken(admin),
      json: { agent_id: id, command_type: 'restart' },
    });
    expect(pending.status).toBe(201);

    clock.advance(5_000);
    const seen = events.length;
    const res = await agentAction(id, 'deregister');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });

    const row = await agentRow(id);
    expect((row!['deregistered_at'] as Date).toISOString()).toBe(clock.now().toISOString());
    expect(await count('agent_groups', id)).toBe(0);
    // Commands stay (purge removes them), the record stays.
    expect(await count('agent_commands', id)).toBe(1);

    const audit = await auditFor(id, 'agent_deregistered');
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor: ADMIN_EMAIL, client_id: biz.record.client_id, session_id: null });
    // Its pending command is failed with it ("Agent deregistered") and listed.
    const dropped = [pending.body.commands[0].id];
    expect(audit[0]?.['data']).toEqual({ agent_id: id, deregistered_by: ADMIN_EMAIL, dropped_command_ids: dropped });
    await portal.ctx.events.drain();
    const published = events.slice(seen);
    expect(published).toHaveLength(1);
    expect(published[0]).toMatchObject({
      event_type: 'agent_deregistered',
      actor: ADMIN_EMAIL,
      client_id: biz.record.client_id,
      data: { agent_id: id, deregistered_by: ADMIN_EMAIL, dropped_command_ids: dropped },
    });
    expect(published[0]?.id).toBe(Number(audit[0]?.['id']));

    const again = await agentAction(id, 'deregister');
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: 'Agent is already deregistered' });
    expect(await auditFor(id, 'agent_deregistered')).toHaveLength(1);
  });

  it('reenable: clears deregistered_at and audits agent_reregistered; reenabling a registered agent is a 409', async () => {
    const id = newAgentId('reen');
    await register(biz.key, id);
    const early = await agentAction(id, 'reenable');
    expect(early.status).toBe(409);
    expect(early.body).toEqual({ error: 'Agent is already registered' });

    expect((await agentAction(id, 'deregister')).status).toBe(200);
    const seen = events.length;
    const res = await agentAction(id, 'reenable');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expect((await agentRow(id))!['deregistered_at']).toBeNull();

    const audit = await auditFor(id, 'agent_reregistered');
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor: ADMIN_EMAIL, client_id: biz.record.client_id });
    expect(audit[0]?.['data']).toEqual({ agent_id: id, reregistered_by: ADMIN_EMAIL });
    await portal.ctx.events.drain();
    expect(events.slice(seen)).toEqual([
      expect.objectContaining({
        event_type: 'agent_reregistered',
        data: { agent_id: id, reregistered_by: ADMIN_EMAIL },
      }),
    ]);

    const again = await agentAction(id, 'reenable');
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: 'Agent is already registered' });
  });

  it('purge of a registered agent is a 409 and changes nothing', async () => {
    const id = newAgentId('nopurge');
    await register(biz.key, id);
    const res = await agentAction(id, 'purge');
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'Only a deregistered agent can be purged' });
    expect(await agentRow(id)).toBeDefined();
    expect(await auditFor(id, 'agent_purged')).toHaveLength(0);
  });

  it('purge removes the agent row, its commands, results and memberships; its audit history stays', async () => {
    const id = newAgentId('purge');
    await register(biz.key, id);
    const grp = await http(portal.url, 'POST', '/api/agent-groups', {
      headers: withToken(admin),
      json: { agent_id: id, group_name: `g-${id}` },
    });
    expect(grp.status).toBe(201);
    const q1 = await http(portal.url, 'POST', '/api/agent-commands', {
      headers: withToken(admin),
      json: { agent_id: id, command_type: 'run_scan', payload: { targets: '10.0.0.1' } },
    });
    const q2 = await http(portal.url, 'POST', '/api/agent-commands', {
      headers: withToken(admin),
      json: { agent_id: id, command_type: 'restart' },
    });
    expect([q1.status, q2.status]).toEqual([201, 201]);
    const commandId = q1.body.commands[0].id as number;
    // Deliver and complete the first so it has a result row.
    const hb = await http(portal.url, 'POST', '/api/health', { headers: withKey(biz.key), json: beat(id) });
    expect(hb.body.commands).toHaveLength(2);
    for (const status of ['acked', 'completed']) {
      const r = await http(portal.url, 'PATCH', '/api/agent-commands', {
        headers: withKey(biz.key),
        json: { command_id: commandId, agent_id: id, status, exit_code: 0, stdout: 'ok' },
      });
      expect(r.status).toBe(200);
    }
    const { rows: before } = await db.query(
      'SELECT count(*)::int AS n FROM agent_command_results WHERE command_id = $1',
      [commandId],
    );
    expect(before[0].n).toBe(1);

    expect((await agentAction(id, 'deregister')).status).toBe(200);
    // Memberships are dropped at deregistration already; put one back the way the old data could hold it.
    await db.query(
      'INSERT INTO agent_groups (client_id, group_name, agent_id) SELECT client_id, $1, agent_id FROM agents WHERE agent_id = $2',
      [`g2-${id}`, id],
    );

    const seen = events.length;
    const res = await agentAction(id, 'purge');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });

    expect(await agentRow(id)).toBeUndefined();
    expect(await count('agent_commands', id)).toBe(0);
    expect(await count('agent_groups', id)).toBe(0);
    const { rows: after } = await db.query(
      'SELECT count(*)::int AS n FROM agent_command_results WHERE command_id = $1',
      [commandId],
    );
    expect(after[0].n).toBe(0);

    const purged = await auditFor(id, 'agent_purged');
    expect(purged).toHaveLength(1);
    expect(purged[0]).toMatchObject({ actor: ADMIN_EMAIL, client_id: biz.record.client_id });
    expect(purged[0]?.['data']).toEqual({ agent_id: id, purged_by: ADMIN_EMAIL });
    // Everything audited about the agent before the purge is still there.
    for (const type of ['agent_first_seen', 'agent_deregistered'])
      expect(await auditFor(id, type), type).toHaveLength(1);
    const { rows: commandEvents } = await db.query(
      `SELECT event_type FROM audit_events WHERE data->>'command_id' = $1`,
      [String(commandId)],
    );
    expect(commandEvents.map((r) => r.event_type)).toEqual(['command_completed']);
    await portal.ctx.events.drain();
    expect(events.slice(seen)).toEqual([
      expect.objectContaining({
        event_type: 'agent_purged',
        actor: ADMIN_EMAIL,
        data: { agent_id: id, purged_by: ADMIN_EMAIL },
      }),
    ]);

    // Gone: every action is now a 404 ...
    expect((await agentAction(id, 'purge')).status).toBe(404);
    expect((await agentAction(id, 'reenable')).status).toBe(404);
    // ... and its next heartbeat registers it afresh.
    await register(biz.key, id);
    expect(await auditFor(id, 'agent_first_seen')).toHaveLength(2);
  });

  it('a purged agent frees its slot under the agent limit', async () => {
    const lic = await createLicense(portal, { tier: 'business', max_agents: 1 });
    const id = newAgentId('slot');
    await register(lic.key, id);
    expect((await agentAction(id, 'deregister')).status).toBe(200);
    expect((await agentAction(id, 'purge')).status).toBe(200);
    await register(lic.key, newAgentId('slot'));
  });

  describe('who may call it', () => {
    let member: ScopedUser;
    let id: string;
    beforeAll(async () => {
      const client = uniqueClientId('own');
      const lic = await createLicense(portal, { tier: 'msp', client_id: client });
      id = newAgentId('own');
      await register(lic.key, id);
      member = await createScopedUser(portal, [client]);
    });

    it("a scoped member is refused, even an msp member acting on its own client's agent", async () => {
      for (const action of ['deregister', 'reenable', 'purge']) {
        const res = await agentAction(id, action, member.token);
        expect(res.status).toBe(403);
        expect(res.body).toEqual({ error: 'Admin access required' });
      }
      expect((await agentRow(id))!['deregistered_at']).toBeNull();
    });

    it('no token is a 401; a license key is not enough', async () => {
      const none = await http(portal.url, 'PATCH', '/api/agents', { json: { agent_id: id, action: 'deregister' } });
      expect(none.status).toBe(401);
      expect(none.body).toEqual({ error: 'Unauthorized' });
      const key = await http(portal.url, 'PATCH', '/api/agents', {
        headers: withKey(LEGACY_KEY),
        json: { agent_id: id, action: 'deregister' },
      });
      expect(key.status).toBe(401);
    });

    it('an unknown action, a missing field or an extra field is a 400', async () => {
      for (const body of [
        { agent_id: id, action: 'delete' },
        { agent_id: id },
        { action: 'deregister' },
        { agent_id: id, action: 'deregister', force: true },
      ]) {
        const res = await http(portal.url, 'PATCH', '/api/agents', { headers: withToken(admin), json: body });
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(typeof res.body.error).toBe('string');
      }
      expect((await agentRow(id))!['deregistered_at']).toBeNull();
    });
  });
});
