import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
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
import { LEGACY_KEY, type TestPortal } from '@svc/test-support/portal';
import { useFleetPortal } from '@svc/test-support/fleet-portal';

/** /api/agent-groups: GET (name → members), POST (add), DELETE (remove); agent:groups is msp only (rule 5). */

let portal: TestPortal;
let db: pg.Client;
let admin: string;
const clock = new FakeClock();
useFleetPortal((f) => ({ portal, db, admin } = f), { clock });

const newGroup = (label = 'g') => `${label}-${randomBytes(4).toString('hex')}`;

async function register(key: string, agentId = newAgentId()): Promise<string> {
  const res = await http(portal.url, 'POST', '/api/health', {
    headers: withKey(key),
    json: {
      agent_id: agentId,
      version: '4.2.3',
      timestamp: new Date().toISOString(),
      status: 'running',
      uptime_seconds: 1,
    },
  });
  expect(res.status, res.text).toBe(200);
  return agentId;
}

const list = (token = admin) => http(portal.url, 'GET', '/api/agent-groups', { headers: withToken(token) });
const add = (agentId: unknown, group: unknown, token = admin) =>
  http(portal.url, 'POST', '/api/agent-groups', {
    headers: withToken(token),
    json: { agent_id: agentId, group_name: group },
  });
const remove = (agentId: string, group: string, token = admin) =>
  http(
    portal.url,
    'DELETE',
    `/api/agent-groups?agent_id=${encodeURIComponent(agentId)}&group_name=${encodeURIComponent(group)}`,
    { headers: withToken(token) },
  );

async function memberships(agentId: string): Promise<string[]> {
  const { rows } = await db.query('SELECT group_name FROM agent_groups WHERE agent_id = $1 ORDER BY group_name', [
    agentId,
  ]);
  return rows.map((r) => r.group_name as string);
}

describe('/api/agent-groups as admin', () => {
  let biz: LicenseFixture;
  beforeAll(async () => {
    biz = await createLicense(portal, { tier: 'business' });
  });

  it('POST adds a member (201) and GET lists groups as name → [{agent_id, client_id, created_at}]', async () => {
    const group = newGroup('east');
    const [a, b] = [await register(biz.key), await register(biz.key)];
    const t1 = clock.now().toISOString();
    const first = await add(a, group);
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      success: true,
      group_name: group,
      agent_id: a,
      client_id: biz.record.client_id,
      created_at: t1,
    });
    clock.advance(2_000);
    const t2 = clock.now().toISOString();
    expect((await add(b, group)).status).toBe(201);
    // One agent may be in several groups.
    const second = newGroup('lab');
    expect((await add(a, second)).status).toBe(201);

    const res = await list();
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['groups']);
    const expectedFirst = [
      { agent_id: a, client_id: biz.record.client_id, created_at: t1 },
      { agent_id: b, client_id: biz.record.client_id, created_at: t2 },
    ].sort((x, y) => x.agent_id.localeCompare(y.agent_id));
    expect(res.body.groups[group]).toEqual(expectedFirst);
    expect(res.body.groups[second]).toEqual([{ agent_id: a, client_id: biz.record.client_id, created_at: t2 }]);
    expect(await memberships(a)).toEqual([group, second].sort());
  });

  it('a duplicate membership is a 409', async () => {
    const group = newGroup();
    const a = await register(biz.key);
    expect((await add(a, group)).status).toBe(201);
    const dup = await add(a, group);
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual({ error: 'Agent is already a member of this group' });
    expect(await memberships(a)).toEqual([group]);
  });

  it('an unknown agent is a 404; a deregistered agent a 409', async () => {
    const unknown = await add(newAgentId('ghost'), newGroup());
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'Agent not found' });

    const gone = await register(biz.key);
    expect(
      (
        await http(portal.url, 'PATCH', '/api/agents', {
          headers: withToken(admin),
          json: { agent_id: gone, action: 'deregister' },
        })
      ).status,
    ).toBe(200);
    const dereg = await add(gone, newGroup());
    expect(dereg.status).toBe(409);
    expect(dereg.body).toEqual({ error: 'Agent is deregistered' });
    expect(await memberships(gone)).toEqual([]);
  });

  it.each([[''], ['-all'], ['a b'], ['east/west'], ['g'.repeat(65)], ['grp;drop'], [42], [null]])(
    'group name %j is a 400',
    async (group) => {
      const a = await register(biz.key);
      const res = await add(a, group);
      expect(res.status).toBe(400);
      expect(typeof res.body.error).toBe('string');
      expect(await memberships(a)).toEqual([]);
    },
  );

  it('a missing or invalid agent_id, or an extra field, is a 400', async () => {
    const group = newGroup();
    for (const body of [
      { group_name: group },
      { agent_id: '../x', group_name: group },
      { agent_id: newAgentId(), group_name: group, role: 'x' },
    ]) {
      const res = await http(portal.url, 'POST', '/api/agent-groups', { headers: withToken(admin), json: body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
  });

  it('DELETE removes a member (the group disappears with its last member); not a member is a 404', async () => {
    const group = newGroup();
    const [a, b] = [await register(biz.key), await register(biz.key)];
    expect((await add(a, group)).status).toBe(201);
    expect((await add(b, group)).status).toBe(201);

    const res = await remove(a, group);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expect((await list()).body.groups[group].map((m: { agent_id: string }) => m.agent_id)).toEqual([b]);

    const again = await remove(a, group);
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ error: 'Agent is not a member of this group' });
    expect((await remove(b, newGroup())).status).toBe(404);

    expect((await remove(b, group)).status).toBe(200);
    expect((await list()).body.groups[group]).toBeUndefined();
  });

  it('DELETE for an unknown agent is a 404; missing parameters a 400', async () => {
    const unknown = await remove(newAgentId('ghost'), newGroup());
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'Agent not found' });
    const missing = await http(portal.url, 'DELETE', `/api/agent-groups?group_name=${newGroup()}`, {
      headers: withToken(admin),
    });
    expect(missing.status).toBe(400);
  });

  it('deregistering an agent drops its memberships; purge leaves no trace in the groups', async () => {
    const group = newGroup();
    const a = await register(biz.key);
    const b = await register(biz.key);
    expect((await add(a, group)).status).toBe(201);
    expect((await add(b, group)).status).toBe(201);
    expect(
      (
        await http(portal.url, 'PATCH', '/api/agents', {
          headers: withToken(admin),
          json: { agent_id: a, action: 'deregister' },
        })
      ).status,
    ).toBe(200);
    expect((await list()).body.groups[group].map((m: { agent_id: string }) => m.agent_id)).toEqual([b]);
    // Re-enabling does not bring memberships back.
    expect(
      (
        await http(portal.url, 'PATCH', '/api/agents', {
          headers: withToken(admin),
          json: { agent_id: a, action: 'reenable' },
        })
      ).status,
    ).toBe(200);
    expect(await memberships(a)).toEqual([]);
  });
});

describe('/api/agent-groups for scoped members and without credentials', () => {
  let clientA: string;
  let clientB: string;
  let agentA: string;
  let agentB: string;
  let mspMember: ScopedUser;
  let bizMember: ScopedUser;
  let shared: string;
  beforeAll(async () => {
    clientA = uniqueClientId('ga');
    clientB = uniqueClientId('gb');
    const a = await createLicense(portal, { tier: 'msp', client_id: clientA });
    const b = await createLicense(portal, { tier: 'business', client_id: clientB });
    agentA = await register(a.key);
    agentB = await register(b.key);
    shared = newGroup('shared');
    expect((await add(agentA, shared)).status).toBe(201);
    expect((await add(agentB, shared)).status).toBe(201);
    mspMember = await createScopedUser(portal, [clientA]);
    bizMember = await createScopedUser(portal, [clientB]);
  });

  it("an msp member sees only its own clients' members", async () => {
    const res = await list(mspMember.token);
    expect(res.status).toBe(200);
    expect(res.body.groups[shared]).toEqual([{ agent_id: agentA, client_id: clientA, created_at: expect.any(String) }]);
    for (const members of Object.values(res.body.groups) as { agent_id: string }[][]) {
      for (const m of members) expect(m.agent_id).not.toBe(agentB);
    }
  });

  it("an msp member manages its own agents, and gets 404 for another client's", async () => {
    const group = newGroup('own');
    const added = await add(agentA, group, mspMember.token);
    expect(added.status).toBe(201);
    expect((await remove(agentA, group, mspMember.token)).status).toBe(200);

    const foreign = await add(agentB, group, mspMember.token);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ error: 'Agent not found' });
    const foreignDelete = await remove(agentB, shared, mspMember.token);
    expect(foreignDelete.status).toBe(404);
    expect(await memberships(agentB)).toEqual([shared]);
  });

  it('an msp member cannot reach an agent without a client (legacy key, no client_id)', async () => {
    const orphan = await register(LEGACY_KEY);
    expect((await add(orphan, newGroup(), mspMember.token)).status).toBe(404);
  });

  it('a business-tier member is refused for every method: agent:groups is msp only', async () => {
    for (const res of [
      await list(bizMember.token),
      await add(agentB, newGroup(), bizMember.token),
      await remove(agentB, shared, bizMember.token),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'Insufficient permissions for agent:groups' });
    }
    expect(await memberships(agentB)).toEqual([shared]);
  });

  it('no token, or a license key, is a 401', async () => {
    for (const headers of [{}, withKey(LEGACY_KEY)]) {
      expect((await http(portal.url, 'GET', '/api/agent-groups', { headers })).status).toBe(401);
      expect(
        (
          await http(portal.url, 'POST', '/api/agent-groups', {
            headers,
            json: { agent_id: agentA, group_name: newGroup() },
          })
        ).status,
      ).toBe(401);
      const del = await http(portal.url, 'DELETE', `/api/agent-groups?agent_id=${agentA}&group_name=${shared}`, {
        headers,
      });
      expect(del.status).toBe(401);
      expect(del.body).toEqual({ error: 'Unauthorized' });
    }
    expect(await memberships(agentA)).toEqual([shared]);
  });
});

describe('groups are per client', () => {
  it("a scoped member adding its agent to a name another client uses gets its own client's group, never the other's broadcasts", async () => {
    const clientA = uniqueClientId('pa');
    const clientB = uniqueClientId('pb');
    const a = await createLicense(portal, { tier: 'msp', client_id: clientA });
    const b = await createLicense(portal, { tier: 'msp', client_id: clientB });
    const agentA = await register(a.key);
    const agentB = await register(b.key);
    const group = newGroup('ops');
    // The admin's group for client B.
    expect((await add(agentB, group)).status).toBe(201);
    // A scoped member of client A uses the same name for its own agent.
    const member = await createScopedUser(portal, [clientA]);
    const joined = await add(agentA, group, member.token);
    expect(joined.status).toBe(201);
    expect(joined.body).toMatchObject({ group_name: group, agent_id: agentA, client_id: clientA });
    const { rows } = await db.query(
      'SELECT client_id, agent_id FROM agent_groups WHERE group_name = $1 ORDER BY client_id',
      [group],
    );
    expect(rows).toEqual(
      [
        { client_id: clientA, agent_id: agentA },
        { client_id: clientB, agent_id: agentB },
      ].sort((x, y) => x.client_id.localeCompare(y.client_id)),
    );
    // The member sees its own member only.
    expect((await list(member.token)).body.groups[group]).toEqual([
      { agent_id: agentA, client_id: clientA, created_at: expect.any(String) },
    ]);

    // A broadcast to the name is ambiguous: refused, nothing queued.
    const broadcast = (body: Record<string, unknown>) =>
      http(portal.url, 'POST', '/api/agent-commands', {
        headers: withToken(admin),
        json: { command_type: 'run_scan', payload: { targets: '10.9.9.9' }, group_target: group, ...body },
      });
    const refused = await broadcast({});
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({
      error:
        'Group name is ambiguous: it exists under several clients; name one with client_id, or set all_clients to reach all of them',
      client_ids: [clientA, clientB].sort(),
    });
    const count = async () =>
      (await db.query('SELECT count(*)::int AS n FROM agent_commands WHERE group_target = $1', [group])).rows[0]
        .n as number;
    expect(await count()).toBe(0);
    expect(
      (
        await db.query(
          `SELECT count(*)::int AS n FROM audit_events WHERE event_type = 'command_dispatched' AND data->>'group_target' = $1`,
          [group],
        )
      ).rows[0].n,
    ).toBe(0);

    // Naming the client reaches that client's group only.
    const toB = await broadcast({ client_id: clientB });
    expect(toB.status).toBe(201);
    expect(toB.body.commands.map((c: { agent_id: string }) => c.agent_id)).toEqual([agentB]);
    const heardA = await http(portal.url, 'POST', '/api/health', {
      headers: withKey(a.key),
      json: {
        agent_id: agentA,
        version: '4.2.3',
        timestamp: new Date().toISOString(),
        status: 'running',
        uptime_seconds: 2,
      },
    });
    expect(heardA.body.commands).toEqual([]);
    const { rows: dispatched } = await db.query(
      `SELECT client_id FROM audit_events WHERE event_type = 'command_dispatched' AND data->>'group_target' = $1`,
      [group],
    );
    expect(dispatched).toEqual([{ client_id: clientB }]);

    // Explicitly all clients: both.
    const all = await broadcast({ all_clients: true });
    expect(all.status).toBe(201);
    expect(all.body.commands.map((c: { agent_id: string }) => c.agent_id).sort()).toEqual([agentA, agentB].sort());
    expect(await count()).toBe(3);

    // A client without that group: 404 as for an unknown group; both flags at once: 400.
    expect((await broadcast({ client_id: uniqueClientId('none') })).status).toBe(404);
    expect((await broadcast({ client_id: clientA, all_clients: true })).status).toBe(400);
  });

  it('an agent id under two clients: the admin names the client to add or remove it, else 409', async () => {
    const a = await createLicense(portal, { tier: 'msp' });
    const b = await createLicense(portal, { tier: 'msp' });
    const id = newAgentId('twin');
    await register(a.key, id);
    await register(b.key, id);
    const group = newGroup('twin');
    const ambiguous = await add(id, group);
    expect(ambiguous.status).toBe(409);
    expect(ambiguous.body).toEqual({
      error: 'Agent id is ambiguous: it exists under several clients; name one with client_id',
      client_ids: [a.record.client_id, b.record.client_id].sort(),
    });
    const named = await http(portal.url, 'POST', '/api/agent-groups', {
      headers: withToken(admin),
      json: { agent_id: id, group_name: group, client_id: b.record.client_id },
    });
    expect(named.status).toBe(201);
    expect(await memberships(id)).toEqual([group]);
    expect((await remove(id, group)).status).toBe(409);
    const removed = await http(
      portal.url,
      'DELETE',
      `/api/agent-groups?agent_id=${id}&group_name=${group}&client_id=${b.record.client_id}`,
      { headers: withToken(admin) },
    );
    expect(removed.status).toBe(200);
    expect(await memberships(id)).toEqual([]);
    // A member of both clients sees both: the same 409, naming only its clients.
    const both = await createScopedUser(portal, [a.record.client_id, b.record.client_id]);
    const bothRes = await add(id, group, both.token);
    expect(bothRes.status).toBe(409);
    expect(bothRes.body.client_ids).toEqual([a.record.client_id, b.record.client_id].sort());
    // A scoped member of one client names the id without ambiguity: it sees one agent.
    const member = await createScopedUser(portal, [a.record.client_id]);
    expect((await add(id, group, member.token)).status).toBe(201);
    const { rows } = await db.query('SELECT client_id FROM agent_groups WHERE agent_id = $1', [id]);
    expect(rows).toEqual([{ client_id: a.record.client_id }]);
  });
});
