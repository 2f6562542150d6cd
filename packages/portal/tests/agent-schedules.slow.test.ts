import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  createLicense,
  createScopedUser,
  FakeClock,
  heartbeatBody,
  newAgentId,
  type LicenseFixture,
} from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { schedulesApi } from '@svc/test-support/portal-schedules';
import type { TestPortal } from '@svc/test-support/portal';
import { useFleetPortal } from '@svc/test-support/fleet-portal';

/** /api/agent-schedules (admin CRUD, audit) and their delivery in the heartbeat answer. */

let portal: TestPortal;
let db: pg.Client;
let admin: string;
const clock = new FakeClock();
useFleetPortal((f) => ({ portal, db, admin } = f), { clock });
const api = () => schedulesApi(portal.url, () => admin);
const newGroup = () => `g-${randomBytes(4).toString('hex')}`;

/** One heartbeat; `revision` is what the agent reports holding (omitted: an older daemon). */
async function beat(key: string, agentId: string, revision?: number) {
  const res = await http(portal.url, 'POST', '/api/health', {
    headers: withKey(key),
    json: heartbeatBody(agentId, revision === undefined ? {} : { portal_schedules_revision: revision }),
  });
  expect(res.status, res.text).toBe(200);
  return res.body as { commands: unknown[]; portal_schedules?: { revision: number; items: { id: string }[] } };
}

const base = { name: 'Nightly', targets: '192.0.2.0/28', cron: '0 2 * * *' };

async function auditOf(id: string): Promise<string[]> {
  const { rows } = await db.query("SELECT event_type FROM audit_events WHERE data->>'schedule_id' = $1 ORDER BY id", [
    id,
  ]);
  return rows.map((r) => r.event_type as string);
}

describe('/api/agent-schedules', () => {
  let msp: LicenseFixture;
  let agent: string;
  beforeAll(async () => {
    msp = await createLicense(portal, { tier: 'msp' });
    agent = newAgentId('sched');
    await beat(msp.key, agent);
  });

  it('creates a schedule for an agent (201, defaults), gets it, lists it, audits it', async () => {
    const t = clock.now().toISOString();
    const res = await api().create({ ...base, agent_id: agent, ports: '22,T:80-90', profile: 'quick' });
    expect(res.status, res.text).toBe(201);
    const s = res.body.schedule;
    expect(s.id).toMatch(/^psch_[0-9a-f]{12}$/);
    expect(s).toEqual({
      id: s.id,
      client_id: msp.record.client_id,
      agent_id: agent,
      group_name: null,
      name: 'Nightly',
      description: null,
      targets: '192.0.2.0/28',
      ports: '22,T:80-90',
      profile: 'quick',
      cron: '0 2 * * *',
      timezone: 'UTC',
      upload: true,
      enabled: true,
      created_by: expect.any(String),
      created_at: t,
      updated_at: t,
    });
    expect((await api().get(s.id)).body).toEqual({ schedule: s });
    const listed = await api().list(msp.record.client_id);
    expect(listed.body.schedules.map((x: { id: string }) => x.id)).toEqual([s.id]);
    expect(await auditOf(s.id)).toEqual(['schedule_created']);
  });

  it('PATCH changes fields, normalises the cron, disables; DELETE removes; both audited', async () => {
    const s = (await api().create({ ...base, agent_id: agent })).body.schedule;
    clock.advance(5_000);
    const res = await api().update(s.id, {
      cron: ' 30  1 * * 1 ',
      timezone: 'Europe/Berlin',
      enabled: false,
      ports: null,
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.schedule).toMatchObject({
      cron: '30 1 * * 1',
      timezone: 'Europe/Berlin',
      enabled: false,
      ports: null,
    });
    expect(res.body.schedule.updated_at).toBe(clock.now().toISOString());
    expect((await api().remove(s.id)).body).toEqual({ ok: true });
    expect((await api().get(s.id)).status).toBe(404);
    expect((await api().remove(s.id)).status).toBe(404);
    expect(await auditOf(s.id)).toEqual(['schedule_created', 'schedule_updated', 'schedule_deleted']);
  });

  it.each([
    [{ cron: '61 * * * *' }, /^cron is not a valid cron pattern/],
    [{ cron: '0 0 30 2 *' }, /^cron never runs$/],
    [{ cron: 'every day' }, /^cron is not a valid cron pattern/],
    [{ timezone: 'Mars/Olympus' }, /^timezone must be an IANA time zone name/],
    [{ timezone: '+01:00' }, /^timezone must be an IANA time zone name/],
    [{ ports: '22;rm' }, /^ports must be a port list/],
    [{ profile: '-oX' }, /^profile must be a profile name/],
    [{ targets: '10.0.0.0/8' }, /addresses/],
    [{ targets: ' , ' }, /^targets: no targets were specified$/],
    [{ upload: 'yes' }, /^Invalid body: upload must be boolean$/],
    [{ name: '' }, /^Invalid body: name /],
  ])('%j is a 400 naming the field', async (change, message) => {
    const res = await api().create({ ...base, agent_id: agent, ...change });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toMatch(message);
  });

  it('needs exactly one target; an unknown agent or group is a 404', async () => {
    const both = await api().create({ ...base, agent_id: agent, group_name: newGroup() });
    expect(both.status).toBe(400);
    expect(both.body.error).toBe('Exactly one of agent_id or group_name is required');
    expect((await api().create(base)).body.error).toBe('Exactly one of agent_id or group_name is required');
    const ghost = await api().create({ ...base, agent_id: newAgentId('ghost') });
    expect([ghost.status, ghost.body.error]).toEqual([404, 'Agent not found']);
    const group = await api().create({ ...base, group_name: newGroup() });
    expect(group.status).toBe(404);
    expect(group.body.error).toMatch(/^Group not found/);
    // Naming the client makes a schedule for a group that has no members yet.
    const named = await api().create({ ...base, group_name: newGroup(), client_id: msp.record.client_id });
    expect(named.status).toBe(201);
    expect(named.body.schedule.client_id).toBe(msp.record.client_id);
  });

  it('is admin only: a scoped user gets 403, a bad id a 400', async () => {
    const user = await createScopedUser(portal, [msp.record.client_id]);
    const res = await http(portal.url, 'GET', '/api/agent-schedules', { headers: withToken(user.token) });
    expect(res.status).toBe(403);
    expect((await api().get('sched_000000000000')).status).toBe(400);
  });
});

describe('delivery in the heartbeat answer', () => {
  let msp: LicenseFixture;
  beforeAll(async () => {
    msp = await createLicense(portal, { tier: 'msp' });
  });

  it("hands an agent its own and its groups' enabled schedules when its revision is another, then nothing", async () => {
    const [a, b] = [newAgentId('a'), newAgentId('b')];
    await beat(msp.key, a, 0);
    await beat(msp.key, b, 0);
    const group = newGroup();
    expect((await api().join(a, group)).status).toBe(201);
    expect((await api().join(b, group)).status).toBe(201);
    const own = (await api().create({ ...base, name: 'own', agent_id: a })).body.schedule;
    const shared = (await api().create({ ...base, name: 'shared', group_name: group })).body.schedule;
    await api().create({ ...base, name: 'off', group_name: group, enabled: false });

    const first = await beat(msp.key, a, 0);
    const got = first.portal_schedules;
    expect(got?.items.map((i) => i.id).sort()).toEqual([own.id, shared.id].sort());
    expect(got?.items.find((i) => i.id === shared.id)).toEqual({
      id: shared.id,
      name: 'shared',
      targets: '192.0.2.0/28',
      ports: null,
      profile: null,
      cron: '0 2 * * *',
      timezone: 'UTC',
      upload: true,
    });
    const revision = got?.revision as number;
    // Held: nothing more in the answer.
    expect(await beat(msp.key, a, revision)).not.toHaveProperty('portal_schedules');
    // An older daemon (no revision reported) never gets the field.
    expect(await beat(msp.key, b)).not.toHaveProperty('portal_schedules');
    expect((await beat(msp.key, b, 0)).portal_schedules?.items.map((i) => i.id)).toEqual([shared.id]);

    // Leaving the group is a change too: the next answer has the smaller set.
    expect(
      (
        await http(portal.url, 'DELETE', `/api/agent-groups?agent_id=${a}&group_name=${group}`, {
          headers: withToken(admin),
        })
      ).status,
    ).toBe(200);
    const after = await beat(msp.key, a, revision);
    expect(after.portal_schedules?.items.map((i) => i.id)).toEqual([own.id]);
    expect(after.portal_schedules?.revision).toBeGreaterThan(revision);

    // Deleting the last one hands an empty set.
    await api().remove(own.id);
    const empty = await beat(msp.key, a, after.portal_schedules?.revision);
    expect(empty.portal_schedules?.items).toEqual([]);
  });

  it('a key without agent:commands never gets schedules', async () => {
    const pro = await createLicense(portal, { tier: 'professional' });
    const a = newAgentId('pro');
    await beat(pro.key, a, 0);
    expect((await api().create({ ...base, agent_id: a })).status).toBe(201);
    expect(await beat(pro.key, a, 0)).not.toHaveProperty('portal_schedules');
  });

  it('an invalid portal_schedules_revision is a 400', async () => {
    const res = await http(portal.url, 'POST', '/api/health', {
      headers: withKey(msp.key),
      json: heartbeatBody(newAgentId(), { portal_schedules_revision: -1 }),
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Invalid field: portal_schedules_revision must be a non-negative integer');
  });
});
