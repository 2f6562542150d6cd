import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import {
  createLicense,
  createScopedUser,
  heartbeatBody,
  licenseAction,
  newAgentId,
  openDb,
  uniqueClientId,
} from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { LEGACY_KEY, type TestPortal } from '@svc/test-support/portal';
import { useFleetPortal } from '@svc/test-support/fleet-portal';

/**
 * The legacy shared key against licensed clients' agents.
 * The legacy key must never act for, move, or register under a licensed client's agent;
 * a license key's first heartbeat on a legacy-registered row takes it over; a legacy agent
 * never carries one client's commands, results or groups to another; concurrent legacy
 * heartbeats that change client_id never answer 5xx. docs/security.md#tenant-boundaries-agents-groups-and-the-legacy-key;
 * docs/decisions.md#the-legacy-key-its-own-agents-only-taken-over-by-license-keys.
 */

let portal: TestPortal;
let db: pg.Client;
let admin: string;
useFleetPortal((f) => ({ portal, db, admin } = f));

const beat = heartbeatBody;
const heartbeat = (key: string, body: unknown) =>
  http(portal.url, 'POST', '/api/health', { headers: withKey(key), json: body });
const queue = (body: Record<string, unknown>) =>
  http(portal.url, 'POST', '/api/agent-commands', { headers: withToken(admin), json: body });
const poll = (key: string, agentId: string) =>
  http(portal.url, 'GET', `/api/agent-commands?agent_id=${encodeURIComponent(agentId)}`, { headers: withKey(key) });
const report = (key: string, body: Record<string, unknown>) =>
  http(portal.url, 'PATCH', '/api/agent-commands', { headers: withKey(key), json: body });
const addToGroup = (agentId: string, clientId: string, group: string) =>
  http(portal.url, 'POST', '/api/agent-groups', {
    headers: withToken(admin),
    json: { agent_id: agentId, client_id: clientId, group_name: group },
  });

const LICENSE_BOUND = { error: 'Agent is registered with a license key: the legacy key cannot act for it' };
const LICENSED_CLIENT = {
  error: "Client has license keys: the legacy key cannot register an agent under it; use one of the client's keys",
};
const MOVE_REFUSED = {
  error:
    'Agent has commands or group memberships under its current client: the legacy key cannot move it to another client_id (an admin can purge it first)',
};
const NOT_FOUND = { error: 'Agent not found' };

async function agentRows(agentId: string) {
  const { rows } = await db.query(
    'SELECT client_id, license_id, key_tier, version, deregistered_at FROM agents WHERE agent_id = $1 ORDER BY client_id',
    [agentId],
  );
  return rows as Record<string, unknown>[];
}

async function commandRows(agentId: string) {
  const { rows } = await db.query(
    `SELECT c.id::int AS id, c.client_id, c.status, r.stdout, r.stderr, r.exit_code
     FROM agent_commands c LEFT JOIN agent_command_results r ON r.command_id = c.id
     WHERE c.agent_id = $1 ORDER BY c.id`,
    [agentId],
  );
  return rows as Record<string, unknown>[];
}

/**
 * Whether `answer` settles first or `waiters` of the portal's connections first wait for a
 * row lock in this test's database (the condition is polled; it ends once `answer` settles).
 */
async function answeredOrWaiting(answer: Promise<unknown>, waiters: number): Promise<'answered' | 'waiting'> {
  let settled = false;
  const answered = answer.then(
    () => 'answered' as const,
    () => 'answered' as const,
  );
  void answered.then(() => {
    settled = true;
  });
  const waiting = (async () => {
    while (!settled) {
      const { rows } = await db.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      if (rows[0].n >= waiters) return 'waiting' as const;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return 'answered' as const;
  })();
  return Promise.race([answered, waiting]);
}

async function queueOne(
  agentId: string,
  clientId: string,
  body: Record<string, unknown> = { command_type: 'restart' },
) {
  const res = await queue({ agent_id: agentId, client_id: clientId, ...body });
  expect(res.status, res.text).toBe(201);
  return res.body.commands[0].id as number;
}

describe('the hijack of a licensed client agent through the legacy key', () => {
  it('the exact attack: the legacy key registers acme’s agent id first; acme’s key takes the agent over and only acme’s daemon gets, reports and shows its commands', async () => {
    const id = 'svcd_c1a10009';
    const acme = uniqueClientId('acme');
    const beta = uniqueClientId('beta');

    // 1. The attacker registers the predictable id under acme before acme's daemon shows up.
    expect((await heartbeat(LEGACY_KEY, beat(id, { client_id: acme }))).status).toBe(200);
    expect(await agentRows(id)).toEqual([
      { client_id: acme, license_id: null, key_tier: 'msp', version: '4.2.3', deregistered_at: null },
    ]);

    // 2. Acme's daemon heartbeats with acme's business key: it takes the agent over.
    const acmeKey = await createLicense(portal, { tier: 'business', client_id: acme });
    // msp: beta's users may read the fleet as well as the command history.
    await createLicense(portal, { tier: 'msp', client_id: beta });
    const taken = await heartbeat(acmeKey.key, beat(id, { version: '5.0.0' }));
    expect(taken.status).toBe(200);
    expect(taken.body.commands).toEqual([]);
    expect(await agentRows(id)).toEqual([
      { client_id: acme, license_id: acmeKey.record.id, key_tier: 'business', version: '5.0.0', deregistered_at: null },
    ]);

    // 3. The admin queues run_scan for acme's agent: the legacy key never gets it.
    const scan = await queueOne(id, acme, { command_type: 'run_scan', payload: { targets: '10.20.0.0/24' } });
    const legacyBeat = await heartbeat(LEGACY_KEY, beat(id, { client_id: acme, version: '6.6.6' }));
    expect(legacyBeat.status).toBe(403);
    expect(legacyBeat.body).toEqual(LICENSE_BOUND);
    const legacyBare = await heartbeat(LEGACY_KEY, beat(id, { version: '6.6.6' }));
    expect(legacyBare.status).toBe(403);
    expect(legacyBare.body).toEqual(LICENSE_BOUND);
    const legacyPoll = await poll(LEGACY_KEY, id);
    expect(legacyPoll.status).toBe(404);
    expect(legacyPoll.body).toEqual(NOT_FOUND);
    expect(await commandRows(id)).toEqual([
      { id: scan, client_id: acme, status: 'pending', stdout: null, stderr: null, exit_code: null },
    ]);

    const own = await heartbeat(acmeKey.key, beat(id));
    expect(own.status).toBe(200);
    expect(own.body.commands.map((c: { id: number; command_type: string }) => [c.id, c.command_type])).toEqual([
      [scan, 'run_scan'],
    ]);

    // 4. The legacy key cannot ack or complete it (forged output never lands).
    for (const status of ['acked', 'completed'] as const) {
      const forged = await report(LEGACY_KEY, {
        command_id: scan,
        agent_id: id,
        status,
        exit_code: 0,
        stdout: 'scan complete: 0 findings',
      });
      expect(forged.status).toBe(404);
      expect(forged.body).toEqual(NOT_FOUND);
    }
    expect(await commandRows(id)).toEqual([
      { id: scan, client_id: acme, status: 'sent', stdout: null, stderr: null, exit_code: null },
    ]);
    expect((await report(acmeKey.key, { command_id: scan, agent_id: id, status: 'acked' })).status).toBe(200);
    const done = await report(acmeKey.key, {
      command_id: scan,
      agent_id: id,
      status: 'completed',
      exit_code: 0,
      stdout: 'acme: 3 hosts up',
    });
    expect(done.status).toBe(200);

    // 5. A legacy heartbeat naming beta does not move acme's agent (beta has keys: refused).
    const toBeta = await heartbeat(LEGACY_KEY, beat(id, { client_id: beta }));
    expect(toBeta.status).toBe(403);
    expect(toBeta.body).toEqual(LICENSED_CLIENT);
    expect(await agentRows(id)).toEqual([
      { client_id: acme, license_id: acmeKey.record.id, key_tier: 'business', version: '4.2.3', deregistered_at: null },
    ]);
    expect(await commandRows(id)).toEqual([
      { id: scan, client_id: acme, status: 'completed', stdout: 'acme: 3 hosts up', stderr: '', exit_code: 0 },
    ]);

    // 6. Beta's users never see acme's agent, command or output; acme's users do.
    const betaUser = await createScopedUser(portal, [beta]);
    const detail = await http(portal.url, 'GET', `/api/agent-commands?command_id=${scan}`, {
      headers: withToken(betaUser.token),
    });
    expect(detail.status).toBe(404);
    const list = await http(portal.url, 'GET', '/api/agent-commands?limit=500', { headers: withToken(betaUser.token) });
    expect(list.status).toBe(200);
    expect(list.body.commands).toEqual([]);
    expect(list.text).not.toContain('acme: 3 hosts up');
    const fleet = await http(portal.url, 'GET', '/api/health?agents=true', { headers: withToken(betaUser.token) });
    expect(fleet.status).toBe(200);
    expect(fleet.body.agents).toEqual([]);
    const acmeUser = await createScopedUser(portal, [acme]);
    const mine = await http(portal.url, 'GET', `/api/agent-commands?command_id=${scan}`, {
      headers: withToken(acmeUser.token),
    });
    expect(mine.status).toBe(200);
    expect(mine.body.result).toMatchObject({ stdout: 'acme: 3 hosts up', exit_code: 0 });
  });

  it('the legacy key never registers an agent under a client that has license keys, active or not, within its agent limit or past it', async () => {
    const full = await createLicense(portal, { tier: 'business', max_agents: 1 });
    expect((await heartbeat(full.key, beat(newAgentId('fill')))).status).toBe(200);
    const revoked = await createLicense(portal, { tier: 'business' });
    await licenseAction(portal, revoked.record.id, 'revoke');
    const inactive = await createLicense(portal, { tier: 'msp' });
    await licenseAction(portal, inactive.record.id, 'deactivate');
    const open = await createLicense(portal, { tier: 'msp' });

    for (const license of [full, revoked, inactive, open]) {
      const id = newAgentId('reg');
      const res = await heartbeat(LEGACY_KEY, beat(id, { client_id: license.record.client_id }));
      expect(res.status, license.record.client_id).toBe(403);
      expect(res.body).toEqual(LICENSED_CLIENT);
      expect(await agentRows(id)).toEqual([]);
    }
    // Past max_agents is therefore never reachable with the legacy key: the slot stays the key's.
    const { rows } = await db.query('SELECT count(*)::int AS n FROM agents WHERE client_id = $1', [
      full.record.client_id,
    ]);
    expect(rows[0].n).toBe(1);
  });

  it('a legacy heartbeat without client_id naming a license agent’s id is refused: no client-less twin', async () => {
    const biz = await createLicense(portal, { tier: 'business' });
    const id = newAgentId('twin');
    expect((await heartbeat(biz.key, beat(id))).status).toBe(200);
    const res = await heartbeat(LEGACY_KEY, beat(id));
    expect(res.status).toBe(403);
    expect(res.body).toEqual(LICENSE_BOUND);
    expect(await agentRows(id)).toEqual([
      {
        client_id: biz.record.client_id,
        license_id: biz.record.id,
        key_tier: 'business',
        version: '4.2.3',
        deregistered_at: null,
      },
    ]);
    // The admin still addresses it without naming a client.
    expect((await queue({ agent_id: id, command_type: 'restart' })).status).toBe(201);
  });
});

describe('a license key takes over a legacy-registered agent', () => {
  it('pending commands go to the licensed daemon; commands the legacy holder held are failed; the takeover is audited', async () => {
    const id = newAgentId('take');
    const client = uniqueClientId('take');
    expect((await heartbeat(LEGACY_KEY, beat(id, { client_id: client }))).status).toBe(200);
    const sent = await queueOne(id, client);
    const acked = await queueOne(id, client, { command_type: 'set_log_level', payload: { level: 'debug' } });
    const delivered = await heartbeat(LEGACY_KEY, beat(id, { client_id: client }));
    expect(delivered.body.commands.map((c: { id: number }) => c.id)).toEqual([sent, acked]);
    expect((await report(LEGACY_KEY, { command_id: acked, agent_id: id, status: 'acked' })).status).toBe(200);
    const pending = await queueOne(id, client, { command_type: 'run_scan', payload: { targets: '10.0.0.1' } });

    const key = await createLicense(portal, { tier: 'msp', client_id: client });
    const taken = await heartbeat(key.key, beat(id));
    expect(taken.status).toBe(200);
    expect(taken.body.commands.map((c: { id: number }) => c.id)).toEqual([pending]);
    const cancelled =
      'Cancelled: a license key took this agent over from the legacy key before the command was reported';
    expect(await commandRows(id)).toEqual([
      { id: sent, client_id: client, status: 'failed', stdout: '', stderr: cancelled, exit_code: null },
      { id: acked, client_id: client, status: 'failed', stdout: '', stderr: cancelled, exit_code: null },
      { id: pending, client_id: client, status: 'sent', stdout: null, stderr: null, exit_code: null },
    ]);
    const { rows: audit } = await db.query(
      `SELECT actor, client_id, data FROM audit_events WHERE event_type = 'agent_first_seen' AND data->>'agent_id' = $1 ORDER BY id`,
      [id],
    );
    expect(audit).toEqual([
      expect.objectContaining({ client_id: client }),
      {
        actor: id,
        client_id: client,
        data: {
          agent_id: id,
          client_id: client,
          version: '4.2.3',
          license_id: key.record.id,
          tier: 'msp',
          taken_over_from: 'legacy-key',
          cancelled_command_ids: [sent, acked],
        },
      },
    ]);

    // The legacy holder is locked out: heartbeat 403, poll and reports 404.
    const later = await queueOne(id, client);
    expect((await heartbeat(LEGACY_KEY, beat(id, { client_id: client }))).body).toEqual(LICENSE_BOUND);
    expect((await poll(LEGACY_KEY, id)).status).toBe(404);
    for (const cmd of [sent, acked, pending, later]) {
      const res = await report(LEGACY_KEY, { command_id: cmd, agent_id: id, status: 'acked' });
      expect(res.status).toBe(404);
      expect(res.body).toEqual(NOT_FOUND);
    }
    expect((await poll(key.key, id)).body.commands.map((c: { id: number }) => c.id)).toEqual([later]);
  });

  it('a legacy poll or status report racing the takeover waits for it, then finds no agent and claims nothing', async () => {
    const id = newAgentId('race');
    const client = uniqueClientId('race');
    expect((await heartbeat(LEGACY_KEY, beat(id, { client_id: client }))).status).toBe(200);
    const held = await queueOne(id, client);
    expect((await poll(LEGACY_KEY, id)).body.commands.map((c: { id: number }) => c.id)).toEqual([held]);
    const pending = await queueOne(id, client);
    const key = await createLicense(portal, { tier: 'business', client_id: client });

    // A takeover in flight, as the portal's runs: the agent row locked, then the license set.
    const takeover = await openDb(portal);
    try {
      await takeover.query('BEGIN');
      await takeover.query('SELECT 1 FROM agents WHERE client_id = $1 AND agent_id = $2 FOR UPDATE', [client, id]);
      await takeover.query('UPDATE agents SET license_id = $1 WHERE client_id = $2 AND agent_id = $3', [
        key.record.id,
        client,
        id,
      ]);
      const answers = Promise.all([
        poll(LEGACY_KEY, id),
        report(LEGACY_KEY, { command_id: held, agent_id: id, status: 'acked' }),
      ]);
      expect(await answeredOrWaiting(answers, 2)).toBe('waiting');
      await takeover.query('COMMIT');
      const [polled, reported] = await answers;
      expect([polled.status, polled.body]).toEqual([404, NOT_FOUND]);
      expect([reported.status, reported.body]).toEqual([404, NOT_FOUND]);
    } finally {
      await takeover.end();
    }
    expect((await commandRows(id)).map((c) => [c['id'], c['status']])).toEqual([
      [held, 'sent'],
      [pending, 'pending'],
    ]);
  });

  it('counts against the key’s max_agents: a full key gets 403 Agent limit reached and the row stays as it was', async () => {
    const id = newAgentId('lim');
    const client = uniqueClientId('lim');
    expect((await heartbeat(LEGACY_KEY, beat(id, { client_id: client }))).status).toBe(200);
    const key = await createLicense(portal, { tier: 'business', client_id: client, max_agents: 1 });
    expect((await heartbeat(key.key, beat(newAgentId('other')))).status).toBe(200);

    const res = await heartbeat(key.key, beat(id, { version: '5.0.0' }));
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'Agent limit reached (1)' });
    expect(await agentRows(id)).toEqual([
      { client_id: client, license_id: null, key_tier: 'msp', version: '4.2.3', deregistered_at: null },
    ]);
    // A license key never acts on a row it has not taken over.
    expect((await poll(key.key, id)).status).toBe(404);
  });
});

describe('a legacy agent never carries one client’s commands, results or groups to another', () => {
  it('an agent with commands or group memberships is not moved (409); one without any is', async () => {
    const from = uniqueClientId('from');
    const to = uniqueClientId('to');

    const withCommand = newAgentId('mvc');
    expect((await heartbeat(LEGACY_KEY, beat(withCommand, { client_id: from }))).status).toBe(200);
    const cmd = await queueOne(withCommand, from);
    const delivered = await heartbeat(LEGACY_KEY, beat(withCommand, { client_id: from }));
    expect(delivered.body.commands.map((c: { id: number }) => c.id)).toEqual([cmd]);
    expect(
      (
        await report(LEGACY_KEY, {
          command_id: cmd,
          agent_id: withCommand,
          status: 'acked',
        })
      ).status,
    ).toBe(200);
    expect(
      (await report(LEGACY_KEY, { command_id: cmd, agent_id: withCommand, status: 'completed', stdout: 'from: ok' }))
        .status,
    ).toBe(200);
    const moved = await heartbeat(LEGACY_KEY, beat(withCommand, { client_id: to, version: '7.0.0' }));
    expect(moved.status).toBe(409);
    expect(moved.body).toEqual(MOVE_REFUSED);
    expect(await agentRows(withCommand)).toEqual([
      { client_id: from, license_id: null, key_tier: 'msp', version: '4.2.3', deregistered_at: null },
    ]);
    expect(await commandRows(withCommand)).toEqual([
      { id: cmd, client_id: from, status: 'completed', stdout: 'from: ok', stderr: '', exit_code: null },
    ]);

    const inGroup = newAgentId('mvg');
    expect((await heartbeat(LEGACY_KEY, beat(inGroup, { client_id: from }))).status).toBe(200);
    const group = `g-${randomBytes(3).toString('hex')}`;
    expect((await addToGroup(inGroup, from, group)).status).toBe(201);
    const refused = await heartbeat(LEGACY_KEY, beat(inGroup, { client_id: to }));
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual(MOVE_REFUSED);
    const { rows: groups } = await db.query('SELECT client_id, group_name FROM agent_groups WHERE agent_id = $1', [
      inGroup,
    ]);
    expect(groups).toEqual([{ client_id: from, group_name: group }]);

    // Nothing to carry: the agent follows its daemon's client_id.
    const clean = newAgentId('mv');
    expect((await heartbeat(LEGACY_KEY, beat(clean, { client_id: from }))).status).toBe(200);
    expect((await heartbeat(LEGACY_KEY, beat(clean, { client_id: to }))).status).toBe(200);
    expect(await agentRows(clean)).toEqual([
      { client_id: to, license_id: null, key_tier: 'msp', version: '4.2.3', deregistered_at: null },
    ]);
    // After the admin purges the old agent, its daemon registers afresh under the new client.
    const purge = (action: string) =>
      http(portal.url, 'PATCH', '/api/agents', {
        headers: withToken(admin),
        json: { agent_id: withCommand, client_id: from, action },
      });
    expect((await purge('deregister')).status).toBe(200);
    expect((await purge('purge')).status).toBe(200);
    expect((await heartbeat(LEGACY_KEY, beat(withCommand, { client_id: to }))).status).toBe(200);
    expect(await agentRows(withCommand)).toEqual([
      { client_id: to, license_id: null, key_tier: 'msp', version: '4.2.3', deregistered_at: null },
    ]);
    expect(await commandRows(withCommand)).toEqual([]);
  });

  it('a legacy agent is not moved into a client that has license keys', async () => {
    const id = newAgentId('mvl');
    const from = uniqueClientId('from');
    const licensed = await createLicense(portal, { tier: 'business' });
    expect((await heartbeat(LEGACY_KEY, beat(id, { client_id: from }))).status).toBe(200);
    const res = await heartbeat(LEGACY_KEY, beat(id, { client_id: licensed.record.client_id }));
    expect(res.status).toBe(403);
    expect(res.body).toEqual(LICENSED_CLIENT);
    expect(await agentRows(id)).toEqual([
      { client_id: from, license_id: null, key_tier: 'msp', version: '4.2.3', deregistered_at: null },
    ]);
  });
});

describe('concurrent legacy heartbeats that change client_id', () => {
  it('12 at once cycling three clients, round after round: every answer is a 200, one agent remains', async () => {
    const clients = [uniqueClientId('c1'), uniqueClientId('c2'), uniqueClientId('c3')];
    for (let round = 0; round < 5; round++) {
      const id = newAgentId('cyc');
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) => heartbeat(LEGACY_KEY, beat(id, { client_id: clients[i % 3] }))),
      );
      expect(results.map((r) => [r.status, r.body])).toEqual(
        Array(12).fill([200, expect.objectContaining({ success: true, commands: [] })]),
      );
      const rows = await agentRows(id);
      expect(rows).toHaveLength(1);
      expect(clients).toContain(rows[0]?.['client_id']);
    }
  });

  it('with a command history, the ones naming another client are 409s, the others 200s, and nothing moves', async () => {
    const clients = [uniqueClientId('h1'), uniqueClientId('h2'), uniqueClientId('h3')];
    const id = newAgentId('cych');
    expect((await heartbeat(LEGACY_KEY, beat(id, { client_id: clients[0] }))).status).toBe(200);
    const cmd = await queueOne(id, clients[0] as string);
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => heartbeat(LEGACY_KEY, beat(id, { client_id: clients[i % 3] }))),
    );
    expect(results.map((r) => r.status)).toEqual(Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? 200 : 409)));
    for (const r of results.filter((r) => r.status === 409)) expect(r.body).toEqual(MOVE_REFUSED);
    const rows = await agentRows(id);
    expect(rows.map((r) => r['client_id'])).toEqual([clients[0]]);
    // Delivered once, to the one client it belongs to.
    const delivered = results.flatMap((r) =>
      r.status === 200 ? r.body.commands.map((c: { id: number }) => c.id) : [],
    );
    expect(delivered).toEqual([cmd]);
  });
});
