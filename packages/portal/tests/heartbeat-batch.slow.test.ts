import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readHeartbeat } from '@svc/protocol';
import { HEARTBEAT_BATCH_SQL, heartbeatBatchValues } from '../src/agents/claim-sql.ts';
import { AGENT_UNREGISTERED } from '../src/agents/resolve.ts';
import { authenticateKey } from '../src/auth/authenticate.ts';
import { createLicense, FakeClock, heartbeatBody, newAgentId, openDb } from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { sampleValue, scrape } from '@svc/test-support/metrics-scrape';

/**
 * Heartbeats that arrive together are written together (agents/heartbeat-batch.ts): the
 * stored rows and every answer are what one-by-one heartbeats give, commands go out once,
 * an agent's heartbeats keep their order, and a refused heartbeat refuses only itself.
 */

const TOKEN = 'batch-metrics-token-0123456789abcdef01234';
let portal: TestPortal;
let db: pg.Client;
let admin: string;
const clock = new FakeClock();

beforeAll(async () => {
  portal = await startTestPortal({
    now: clock.now,
    env: { SVC_METRICS_TOKEN: TOKEN, SVC_MAX_CONNECTIONS_PER_ADDRESS: '1000' },
  });
  db = await openDb(portal);
  admin = await portal.adminToken();
});
afterAll(async () => {
  await db?.end();
  await portal?.close();
});

const heartbeat = (key: string, body: unknown) =>
  http(portal.url, 'POST', '/api/health', { headers: withKey(key), json: body });
const asAdmin = (method: string, path: string, json: unknown) =>
  http(portal.url, method, path, { headers: withToken(admin), json });

/** Heartbeats written by batch statements so far (the histogram's count and sum). */
async function batches(): Promise<{ count: number; sum: number }> {
  const s = await scrape(portal.url, TOKEN);
  return {
    count: sampleValue(s, 'svc_heartbeat_batch_size_count'),
    sum: sampleValue(s, 'svc_heartbeat_batch_size_sum'),
  };
}

/** `n` at a time, in order of `items`. */
async function bounded<T, R>(items: T[], n: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += n) out.push(...(await Promise.all(items.slice(i, i + n).map(fn))));
  return out;
}

async function register(key: string, agents: string[]): Promise<void> {
  const res = await bounded(agents, 50, (a) => heartbeat(key, heartbeatBody(a)));
  expect(res.map((r) => r.status)).toEqual(agents.map(() => 200));
}

async function queueFor(clientId: string, agent: string, priority: number): Promise<string> {
  const res = await asAdmin('POST', '/api/agent-commands', {
    agent_id: agent,
    client_id: clientId,
    command_type: 'restart',
    priority,
  });
  expect(res.status).toBe(201);
  return String(res.body.commands[0].id);
}

/** An answer with each command's id left out: two clients' fleets compare equal. */
const withoutIds = (r: { status: number; body: any }) => ({
  status: r.status,
  body: Array.isArray(r.body?.commands)
    ? { ...r.body, commands: r.body.commands.map(({ id: _, ...c }: { id: number }) => c) }
    : r.body,
});

describe('heartbeats arriving together', () => {
  it('200 at once store and answer exactly what 200 one after the other do, in few statements', async () => {
    const one = await createLicense(portal, { tier: 'business', max_agents: null });
    const two = await createLicense(portal, { tier: 'business', max_agents: null });
    // The same agent ids under two clients: two fleets that must end up identical.
    const agents = Array.from({ length: 200 }, (_, i) => `svcd_same_${String(i).padStart(3, '0')}`);
    await register(one.key, agents);
    await register(two.key, agents);
    const plan = agents.flatMap((a, i) =>
      Array.from({ length: i % 5 === 0 ? 2 : 0 }, (_, j) => ({ a, priority: (i + j * 4) % 11 })),
    );
    for (const lic of [one, two]) await bounded(plan, 25, (p) => queueFor(lic.record.client_id, p.a, p.priority));
    clock.advance(60_000);
    const body = (a: string, i: number) =>
      heartbeatBody(a, {
        uptime_seconds: 1000 + i,
        version: `4.3.${i % 7}`,
        ...(i % 2 === 0 ? { system_info: { hostname: `host-${i}`, cores: i % 8 } } : {}),
      });

    const sequential = [];
    for (const [i, a] of agents.entries()) sequential.push(await heartbeat(one.key, body(a, i)));
    const before = await batches();
    const together = await Promise.all(agents.map((a, i) => heartbeat(two.key, body(a, i))));
    const after = await batches();

    expect(together.map(withoutIds)).toEqual(sequential.map(withoutIds));
    expect(together.filter((r) => r.body.commands?.length > 0)).toHaveLength(40);
    const rows = async (clientId: string) =>
      (
        await db.query(
          `SELECT a.agent_id, a.version, a.sent_at, a.status, a.uptime_seconds, a.schedules, a.system_info, a.received_at, a.deregistered_at,
             (SELECT json_agg(json_build_object('p', c.priority, 's', c.status, 'at', c.sent_at) ORDER BY c.priority)
              FROM agent_commands c WHERE c.client_id = a.client_id AND c.agent_id = a.agent_id) AS commands
           FROM agents a WHERE a.client_id = $1 ORDER BY a.agent_id`,
          [clientId],
        )
      ).rows;
    const stored = await rows(two.record.client_id);
    expect(stored).toEqual(await rows(one.record.client_id));
    expect(stored[1]).toMatchObject({ uptime_seconds: 1001, version: '4.3.1', received_at: clock.now() });
    // Written in batches: fewer statements than heartbeats, and more than one heartbeat in them.
    expect(after.count - before.count).toBeGreaterThan(0);
    expect(after.count - before.count).toBeLessThan(200);
    expect(after.sum - before.sum).toBeGreaterThanOrEqual(2 * (after.count - before.count));
  });

  it("each agent's queued commands go out exactly once, in delivery order, across its concurrent heartbeats", async () => {
    const lic = await createLicense(portal, { tier: 'business', max_agents: null });
    const agents = Array.from({ length: 40 }, () => newAgentId('once'));
    await register(lic.key, agents);
    const group = `once-${agents[0]?.slice(-8)}`;
    await bounded(agents, 20, async (a) =>
      expect((await asAdmin('POST', '/api/agent-groups', { agent_id: a, group_name: group })).status).toBe(201),
    );
    for (let j = 0; j < 25; j++)
      expect(
        (
          await asAdmin('POST', '/api/agent-commands', {
            group_target: group,
            command_type: 'restart',
            priority: j % 11,
          })
        ).status,
      ).toBe(201);

    const before = await batches();
    const answers = await Promise.all(
      agents.flatMap((a) => [1, 2, 3, 4].map(() => heartbeat(lic.key, heartbeatBody(a)))),
    );
    expect((await batches()).count).toBeGreaterThan(before.count);
    expect(answers.map((r) => r.status)).toEqual(answers.map(() => 200));
    for (const [n, a] of agents.entries()) {
      const mine = answers.slice(n * 4, n * 4 + 4).map((r) => r.body.commands as { id: number; priority: number }[]);
      const { rows } = await db.query(
        `SELECT id::int AS id FROM agent_commands WHERE client_id = $1 AND agent_id = $2 AND status = 'sent'
         ORDER BY priority DESC, created_at, id`,
        [lic.record.client_id, a],
      );
      const delivered = mine.flat().map((c) => c.id);
      expect(delivered.toSorted((x, y) => x - y)).toEqual(rows.map((r) => r.id).toSorted((x, y) => x - y));
      expect(rows).toHaveLength(25);
      // One after the other: the first gets the 20 first in delivery order, the next the 5 left.
      expect(mine.map((c) => c.length).toSorted((x, y) => x - y)).toEqual([0, 0, 5, 20]);
      const first = mine.find((c) => c.length === 20) ?? [];
      expect(first.map((c) => c.id)).toEqual(rows.slice(0, 20).map((r) => r.id));
    }
  });

  it("an agent's second heartbeat in flight waits for its first: the later state is the one stored", async () => {
    const lic = await createLicense(portal, { tier: 'business', max_agents: null });
    const agents = Array.from({ length: 60 }, () => newAgentId('order'));
    await register(lic.key, agents);
    const queued = await bounded(agents, 20, (a) => queueFor(lic.record.client_id, a, 5));
    const principal = await authenticateKey(portal.ctx, lic.key, {
      address: '127.0.0.1',
      onLegacyKey: () => undefined,
    });
    const writer = portal.ctx.heartbeats;
    const read = (a: string, uptime: number) => {
      const r = readHeartbeat(heartbeatBody(a, { uptime_seconds: uptime }), { keepClientId: false });
      if (!r.ok) throw new Error(r.message);
      return r.heartbeat;
    };
    // Arrival order is the order of these calls: each agent's uptime 1, then its uptime 2.
    const pending = agents.flatMap((a) => [writer.record(principal, read(a, 1)), writer.record(principal, read(a, 2))]);
    const answers = await Promise.all(pending);
    const { rows } = await db.query(
      'SELECT agent_id, uptime_seconds FROM agents WHERE client_id = $1 ORDER BY agent_id',
      [lic.record.client_id],
    );
    expect(rows).toEqual(agents.toSorted().map((agent_id) => ({ agent_id, uptime_seconds: 2 })));
    // The earlier heartbeat got the agent's command, the later one nothing.
    expect(answers.map((a) => a.commands.map((c) => String(c.id)))).toEqual(
      agents.flatMap((_, i) => [[queued[i]], []]),
    );
  });

  it('a refused heartbeat in a batch refuses only itself; the others get their exact answers', async () => {
    const limited = await createLicense(portal, { tier: 'business', max_agents: 2 });
    const other = await createLicense(portal, { tier: 'business', max_agents: null });
    const [r1, r2] = [newAgentId('lim'), newAgentId('lim')] as [string, string];
    await register(limited.key, [r1, r2]);
    const others = Array.from({ length: 40 }, () => newAgentId('fill'));
    const gone = newAgentId('gone');
    await register(other.key, [...others, gone]);
    expect((await asAdmin('PATCH', '/api/agents', { agent_id: gone, action: 'deregister' })).status).toBe(200);
    const c1 = await queueFor(limited.record.client_id, r1, 7);
    const c2 = await queueFor(other.record.client_id, others[3] as string, 2);
    const [n1, n2] = [newAgentId('over'), newAgentId('over')];
    clock.advance(60_000);
    const received_at = clock.now().toISOString();

    const before = await batches();
    const sent: [string, unknown][] = [
      [limited.key, heartbeatBody(r1, { uptime_seconds: 77 })],
      [limited.key, heartbeatBody(n1)],
      [other.key, heartbeatBody(gone)],
      ...others.map((a): [string, unknown] => [other.key, heartbeatBody(a, { uptime_seconds: 88 })]),
      [limited.key, heartbeatBody(r2)],
      [limited.key, heartbeatBody(n2)],
      [other.key, heartbeatBody(others[0] as string, { version: '' })],
    ];
    const res = await Promise.all(sent.map(([key, body]) => heartbeat(key, body)));
    const after = await batches();

    const ok = (commands: unknown[]) => ({ status: 200, body: { success: true, received_at, commands } });
    const restart = (id: string, priority: number) => ({
      id: Number(id),
      command_type: 'restart',
      payload: {},
      priority,
      created_by: expect.any(String),
      created_at: expect.any(String),
    });
    expect(res.map((r) => ({ status: r.status, body: r.body }))).toEqual([
      ok([restart(c1, 7)]),
      { status: 403, body: { error: 'Agent limit reached (2)' } },
      { status: 403, body: { error: AGENT_UNREGISTERED } },
      ...others.map((_, i) => ok(i === 3 ? [restart(c2, 2)] : [])),
      ok([]),
      { status: 403, body: { error: 'Agent limit reached (2)' } },
      { status: 400, body: { error: 'Missing required field: version' } },
    ]);
    const { rows } = await db.query('SELECT agent_id FROM agents WHERE agent_id = ANY($1)', [[n1, n2]]);
    expect(rows).toEqual([]);
    const stored = await db.query(
      'SELECT uptime_seconds, received_at FROM agents WHERE client_id = $1 AND agent_id = $2',
      [limited.record.client_id, r1],
    );
    expect(stored.rows).toEqual([{ uptime_seconds: 77, received_at: clock.now() }]);
    expect(after.count - before.count).toBeGreaterThan(0);
  });

  it('a batch statement that fails is written one by one: every heartbeat still gets its own answer', async () => {
    const lic = await createLicense(portal, { tier: 'business', max_agents: null });
    const agents = Array.from({ length: 60 }, () => newAgentId('fail'));
    await register(lic.key, agents);
    const queued = await queueFor(lic.record.client_id, agents[7] as string, 4);
    // A real failure inside PostgreSQL: any statement updating two of this client's agents at once is refused.
    const client = lic.record.client_id.replaceAll("'", "''");
    await db.query('CREATE SEQUENCE refused_batches');
    await db.query(`CREATE FUNCTION refuse_batches() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF (SELECT count(*) FROM updated WHERE client_id = '${client}') > 1 THEN
          PERFORM nextval('refused_batches'); -- not rolled back with the statement: the test sees it
          RAISE EXCEPTION 'no batches here';
        END IF;
        RETURN NULL;
      END $$`);
    await db.query(`CREATE TRIGGER refuse_batches AFTER UPDATE ON agents REFERENCING NEW TABLE AS updated
      FOR EACH STATEMENT EXECUTE FUNCTION refuse_batches()`);
    try {
      clock.advance(60_000);
      const res = await Promise.all(agents.map((a) => heartbeat(lic.key, heartbeatBody(a, { uptime_seconds: 99 }))));
      expect(res.map((r) => r.status)).toEqual(agents.map(() => 200));
      expect(res.map((r) => r.body.commands.map((c: { id: number }) => String(c.id)))).toEqual(
        agents.map((_, i) => (i === 7 ? [queued] : [])),
      );
      const { rows } = await db.query('SELECT DISTINCT uptime_seconds, received_at FROM agents WHERE client_id = $1', [
        lic.record.client_id,
      ]);
      expect(rows).toEqual([{ uptime_seconds: 99, received_at: clock.now() }]);
      const refused = await db.query('SELECT is_called FROM refused_batches');
      expect(refused.rows).toEqual([{ is_called: true }]);
    } finally {
      await db.query('DROP TRIGGER refuse_batches ON agents');
      await db.query('DROP FUNCTION refuse_batches()');
      await db.query('DROP SEQUENCE refused_batches');
    }
  });

  it('two batches with the same agents in opposite orders (two replicas, a retried heartbeat) do not deadlock', async () => {
    const lic = await createLicense(portal, { tier: 'business', max_agents: null });
    const [a, b, x] = ['a', 'b', 'x'].map((l) => newAgentId(`order-${l}`)) as [string, string, string];
    await register(lic.key, [a, b, x]);
    const clientId = lic.record.client_id;
    const batch = (agents: string[]) =>
      heartbeatBatchValues(
        agents.map((agent_id) => ({
          version: '4.2.3',
          sent_at: clock.now(),
          status: 'running',
          uptime_seconds: 1,
          schedules: null,
          system_info: null,
          now: clock.now(),
          client_id: clientId,
          agent_id,
          can_receive: true,
        })),
        10,
      );
    // A fleet-sized table, so the statement is planned as in production: the batch's rows
    // first, each agent's row found by index, in the batch's order.
    await db.query(
      `INSERT INTO agents (agent_id, client_id, license_id, key_tier, version, sent_at, status, uptime_seconds, received_at, first_seen_at)
       SELECT 'svcd_fleet_' || n, $1, $2, 'business', '4.2.3', now(), 'running', 0, now(), now()
       FROM generate_series(1, 20000) AS n`,
      [clientId, lic.record.id],
    );
    await db.query('ANALYZE agents');
    // Two replicas' connections, and a third session that holds x's row.
    const [one, two, holder] = [0, 1, 2].map(() => new pg.Client({ connectionString: portal.databaseUrl }));
    for (const c of [one, two, holder]) await c!.connect();
    const waiting = async (pid: number) => {
      const { rows } = await db.query('SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1', [pid]);
      return rows[0]?.wait_event_type;
    };
    try {
      await holder!.query('BEGIN');
      await holder!.query('SELECT 1 FROM agents WHERE client_id = $1 AND agent_id = $2 FOR UPDATE', [clientId, x]);
      // Replica two: b, then x (waits for the holder), then a.
      const second = two!.query(HEARTBEAT_BATCH_SQL, batch([b, x, a])).then(
        (r) => r.rowCount,
        (e: Error & { code?: string }) => e.code ?? e.message,
      );
      const secondPid = (two as unknown as { processID: number }).processID;
      await expect.poll(() => waiting(secondPid)).toBe('Lock');
      // Replica one: a, then b (waits for replica two).
      const first = one!.query(HEARTBEAT_BATCH_SQL, batch([a, b])).then(
        (r) => r.rowCount,
        (e: Error & { code?: string }) => e.code ?? e.message,
      );
      const firstPid = (one as unknown as { processID: number }).processID;
      await expect.poll(() => waiting(firstPid)).toBe('Lock');
      await holder!.query('COMMIT');
      // Both written, one after the other; a deadlock would fail one of them with 40P01.
      expect(await Promise.all([first, second])).toEqual([2, 3]);
    } finally {
      await holder!.query('ROLLBACK').catch(() => undefined);
      await Promise.all([one, two, holder].map((c) => c!.end()));
    }
  });
});
