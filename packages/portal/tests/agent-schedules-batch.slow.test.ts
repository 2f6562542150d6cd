import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense, heartbeatBody, newAgentId } from '@svc/test-support/factories';
import { readHeartbeat } from '@svc/protocol';
import { http, withKey } from '@svc/test-support/http';
import { sampleValue, scrape } from '@svc/test-support/metrics-scrape';
import { schedulesApi } from '@svc/test-support/portal-schedules';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { portalSchedulesAnswer } from '../src/agents/portal-schedules.ts';
import { authenticateKey } from '../src/auth/authenticate.ts';

/**
 * Portal schedules through batched heartbeats (heartbeat-batch.ts): the batch statement reads the
 * client's revision like the single one, so heartbeats written together get the same set.
 */

const TOKEN = `metrics-${randomBytes(16).toString('hex')}`;
let portal: TestPortal;
let admin: string;

beforeAll(async () => {
  portal = await startTestPortal({ env: { SVC_METRICS_TOKEN: TOKEN, SVC_MAX_CONNECTIONS_PER_ADDRESS: '1000' } });
  admin = await portal.adminToken();
});
afterAll(async () => {
  await portal?.close();
});

const beat = (key: string, agent: string, revision: number) =>
  http(portal.url, 'POST', '/api/health', {
    headers: withKey(key),
    json: heartbeatBody(agent, { portal_schedules_revision: revision }),
  });
const batched = async () => sampleValue(await scrape(portal.url, TOKEN), 'svc_heartbeat_batch_size_sum');

describe('portal schedules in batched heartbeats', () => {
  it('every heartbeat of a batch gets its set when its revision is another, and none when it holds it', async () => {
    const msp = await createLicense(portal, { tier: 'msp', max_agents: null });
    const api = schedulesApi(portal.url, () => admin);
    const agents = Array.from({ length: 60 }, (_, i) => newAgentId(`b${i}`));
    for (const a of agents) expect((await beat(msp.key, a, 0)).status).toBe(200);
    const group = `g-${randomBytes(4).toString('hex')}`;
    for (const a of agents.slice(0, 30)) expect((await api.join(a, group)).status).toBe(201);
    const s = (await api.create({ name: 'n', group_name: group, targets: '192.0.2.1', cron: '0 1 * * *' })).body
      .schedule;

    // Through the portal's own writer, every call in one tick: the first two go out alone and the
    // other 58 wait for them, so they are written by batch statements whatever the machine's load
    // (over HTTP, requests a busy machine parses one by one may each find the writer idle).
    const principal = await authenticateKey(portal.ctx, msp.key, {
      address: '127.0.0.1',
      onLegacyKey: () => undefined,
    });
    const writer = portal.ctx.heartbeats;
    const read = (a: string) => {
      const r = readHeartbeat(heartbeatBody(a, { portal_schedules_revision: 0 }), { keepClientId: false });
      if (!r.ok) throw new Error(r.message);
      return r.heartbeat;
    };
    const before = await batched();
    const written = await Promise.all(agents.map((a) => writer.record(principal, read(a))));
    expect(await batched()).toBeGreaterThanOrEqual(before + 58);
    const sets = (await Promise.all(
      written.map((w, i) => portalSchedulesAnswer(portal.ctx, agents[i] as string, 0, w.schedules)),
    )) as { revision: number; items: { id: string }[] }[];
    const revision = sets[0]?.revision as number;
    expect(sets.map((x) => [x.revision, x.items.map((i: { id: string }) => i.id)])).toEqual(
      agents.map((_, i) => [revision, i < 30 ? [s.id] : []]),
    );

    const held = await Promise.all(agents.map((a) => beat(msp.key, a, revision)));
    expect(held.filter((r) => 'portal_schedules' in r.body)).toEqual([]);
  });
});
