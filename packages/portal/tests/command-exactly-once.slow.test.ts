import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, withKey, withToken, type HttpResult } from '@svc/test-support/http';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  KEY_ENCRYPTION_KEY,
  LEGACY_KEY,
  createTestDatabase,
  login,
} from '@svc/test-support/portal';
import { postUpload, sessionDoc, sessionParts } from '@svc/test-support/upload';
import { seededRandom } from '@svc/test-support/random';
import {
  describe as describeProcess,
  killAll,
  makeDataDir,
  spawnPortal,
  waitForHealth,
  type PortalProcess,
} from '@svc/test-support/portal-process';

/**
 * Exactly-once command delivery across replicas (docs/api.md#agents-and-commands,
 * "GET/POST/PATCH /api/agent-commands": FOR UPDATE SKIP LOCKED so replicas never
 * hand out a command twice; docs/api.md#agents-and-commands: strict sent → acked → completed|failed).
 *
 * Two real portal processes share ONE database. 60 agents (msp key, business key, legacy
 * key) get 25 commands each of mixed priorities plus group broadcasts; a second wave is
 * queued while the agents run. Each agent then heartbeats and polls at random against
 * both portals, sometimes both at once (a heartbeat on one replica racing a poll on the
 * other for the same agent), and reports acked then completed/failed for what it got;
 * some agents misbehave on purpose (report before ack, ack twice, finish twice).
 */

const AGENTS = 60;
const COMMANDS_PER_AGENT = 25;
/** Per agent; each round is one claim (or a racing pair) plus the reports for what came back. */
const MAX_ROUNDS = 80;
/** Requests in flight across the whole simulation. */
const MAX_IN_FLIGHT = 24;
const SEED = Number(process.env['EXACTLY_ONCE_SEED'] ?? randomBytes(4).readUInt32LE(0));

// Seeded, so the choices (not the interleaving) of a failing run can be replayed.
const random = seededRandom(SEED);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

/** A counting semaphore: bounds the requests in flight against both portals together. */
class Limiter {
  #free: number;
  #waiting: (() => void)[] = [];
  constructor(n: number) {
    this.#free = n;
  }
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await fn();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    }
  }
}
const limiter = new Limiter(MAX_IN_FLIGHT);

interface Delivered {
  id: number;
  command_type: string;
  payload: Record<string, unknown>;
  priority: number;
  created_by: string;
  created_at: string;
  group_target?: string | null;
}

interface Agent {
  id: string;
  key: string;
  /** Sent with the legacy key only: the daemon's reported client. */
  clientId?: string;
  /** A stored session of the agent's client, named in its run_scan results (a result may name only its own client's). */
  sessionId?: string | undefined;
  /** Misbehaving agents send illegal reports on purpose. */
  rogue: boolean;
  expected: Set<number>;
  delivered: number[];
  finished: Map<number, 'completed' | 'failed'>;
}

interface Replica {
  proc: PortalProcess;
  url: string;
  token: string;
}

let dbUrl: string;
let db: pg.Client;
const replicas: Replica[] = [];

/** Every report the test sent, with what it must get: 200 for legal transitions, 409 for illegal ones. */
const reports: { commandId: number; status: string; expected: number; got: number; why: string }[] = [];
/** command id → how many times any response (heartbeat or poll, either replica) delivered it. */
const deliveries = new Map<number, number>();
const orderViolations: string[] = [];
const claimFailures: string[] = [];
/** racing: a heartbeat and a poll for one agent on both replicas at once; split: both of them got commands. */
const claims = { heartbeat: 0, poll: 0, racing: 0, split: 0, nonEmpty: 0 };
const allExpected = new Set<number>();

const call = <T = any>(
  url: string,
  method: string,
  path: string,
  opts: Parameters<typeof http>[3] = {},
): Promise<HttpResult<T>> => limiter.run(() => http<T>(url, method, path, opts));

const beat = (agent: Agent, uptime: number) => ({
  agent_id: agent.id,
  version: '4.2.3',
  timestamp: new Date().toISOString(),
  status: 'running',
  uptime_seconds: uptime,
  ...(agent.clientId ? { client_id: agent.clientId } : {}),
});

const COMMAND_SHAPES: { command_type: string; payload: Record<string, unknown> }[] = [
  { command_type: 'restart', payload: {} },
  { command_type: 'set_log_level', payload: { level: 'debug' } },
  { command_type: 'run_scan', payload: { targets: '10.0.0.0/24', profile: 'quick' } },
  { command_type: 'push_session', payload: {} },
  { command_type: 'update', payload: { branch: 'main' } },
  { command_type: 'push_config', payload: { config_key: 'DAEMON_LOG_LEVEL', config_value: 'info' } },
  { command_type: 'shutdown', payload: { graceful: true } },
];

async function queue(replica: Replica, body: Record<string, unknown>): Promise<{ id: number; agent_id: string }[]> {
  const res = await call(replica.url, 'POST', '/api/agent-commands', { headers: withToken(replica.token), json: body });
  if (res.status !== 201)
    throw new Error(`POST /api/agent-commands ${JSON.stringify(body)}: ${res.status} ${res.text}`);
  return res.body.commands as { id: number; agent_id: string }[];
}

function expectQueued(agents: Map<string, Agent>, queued: { id: number; agent_id: string }[]): void {
  for (const q of queued) {
    const agent = agents.get(q.agent_id);
    if (!agent) throw new Error(`queued for an agent the test does not know: ${q.agent_id}`);
    agent.expected.add(q.id);
    allExpected.add(q.id);
  }
}

/** Priority descending, then created_at ascending (the portal breaks exact ties by id). */
function checkOrder(agent: Agent, via: string, commands: Delivered[]): void {
  for (let i = 1; i < commands.length; i++) {
    const a = commands[i - 1] as Delivered;
    const b = commands[i] as Delivered;
    const ordered =
      a.priority > b.priority ||
      (a.priority === b.priority && (a.created_at < b.created_at || (a.created_at === b.created_at && a.id < b.id)));
    if (!ordered)
      orderViolations.push(
        `${agent.id} via ${via}: #${a.id} (p${a.priority} ${a.created_at}) before #${b.id} (p${b.priority} ${b.created_at})`,
      );
  }
}

async function claim(agent: Agent, kind: 'heartbeat' | 'poll', replica: Replica, round: number): Promise<Delivered[]> {
  const res =
    kind === 'heartbeat'
      ? await call(replica.url, 'POST', '/api/health', { headers: withKey(agent.key), json: beat(agent, round) })
      : await call(replica.url, 'GET', `/api/agent-commands?agent_id=${encodeURIComponent(agent.id)}`, {
          headers: withKey(agent.key),
        });
  claims[kind]++;
  if (res.status !== 200) {
    claimFailures.push(`${kind} ${agent.id} on ${replica.url}: ${res.status} ${res.text.slice(0, 200)}`);
    return [];
  }
  const commands = res.body.commands as Delivered[];
  if (commands.length > 0) claims.nonEmpty++;
  checkOrder(agent, `${kind}@${replica.url}`, commands);
  for (const c of commands) {
    deliveries.set(c.id, (deliveries.get(c.id) ?? 0) + 1);
    agent.delivered.push(c.id);
  }
  return commands;
}

async function report(
  agent: Agent,
  commandId: number,
  status: string,
  expected: number,
  why: string,
  extra: Record<string, unknown> = {},
): Promise<number> {
  const replica = pick(replicas);
  const res = await call(replica.url, 'PATCH', '/api/agent-commands', {
    headers: withKey(agent.key),
    json: { command_id: commandId, agent_id: agent.id, status, ...extra },
  });
  reports.push({ commandId, status, expected, got: res.status, why });
  return res.status;
}

/** What the daemon does with one command it received, with the rogue agents' mistakes mixed in. */
async function execute(agent: Agent, cmd: Delivered): Promise<void> {
  const outcome: 'completed' | 'failed' = random() < 0.8 ? 'completed' : 'failed';
  const result =
    outcome === 'completed'
      ? {
          exit_code: 0,
          stdout: `\u001b[32mok\u001b[0m ${cmd.command_type}`,
          stderr: '',
          ...(cmd.command_type === 'run_scan' ? { session_id: agent.sessionId } : {}),
        }
      : { exit_code: pick([1, 124]), stdout: '', stderr: 'boom' };
  const mistake = agent.rogue ? random() : 1;
  if (mistake < 0.15)
    await report(agent, cmd.id, outcome, 409, 'finished before acked (sent → completed|failed)', result);
  await report(agent, cmd.id, 'acked', 200, 'ack');
  if (mistake >= 0.15 && mistake < 0.3) await report(agent, cmd.id, 'acked', 409, 'acked twice');
  await report(agent, cmd.id, outcome, 200, outcome, result);
  agent.finished.set(cmd.id, outcome);
  if (mistake >= 0.3 && mistake < 0.45)
    await report(
      agent,
      cmd.id,
      pick(['completed', 'failed', 'acked']),
      409,
      'reported again after it finished',
      result,
    );
}

// Bounded by rounds, not by a deadline: a loaded machine makes the simulation slower, not wrong.
async function runAgent(agent: Agent, wave2: { done: boolean }, firstRoundDone: () => void): Promise<void> {
  let round = 0;
  while (round < MAX_ROUNDS) {
    if (agent.finished.size >= agent.expected.size) {
      if (wave2.done) return;
      // Nothing outstanding yet: wait for the second wave (rounds count only when there is work).
      await sleep(10);
      continue;
    }
    round++;
    const [first, second] = random() < 0.5 ? [replicas[0], replicas[1]] : [replicas[1], replicas[0]];
    const r = random();
    let received: Delivered[];
    // The first round with work always races, later ones at random: a claim drains 20 (heartbeat)
    // or 50 (poll) commands, so an agent's backlog is gone after a round or two.
    if (round === 1 || r < 0.4) {
      // A heartbeat on one replica and a poll on the other, for the same agent, at the same time.
      claims.racing++;
      const [a, b] = await Promise.all([
        claim(agent, 'heartbeat', first as Replica, round),
        claim(agent, 'poll', second as Replica, round),
      ]);
      if (a.length > 0 && b.length > 0) claims.split++;
      received = [...a, ...b];
    } else {
      received = await claim(agent, r < 0.7 ? 'heartbeat' : 'poll', first as Replica, round);
    }
    if (round === 1) firstRoundDone();
    // The daemon runs what it got in the order received (docs/agent.md).
    for (const cmd of received) await execute(agent, cmd);
    if (received.length === 0) await sleep(5 + random() * 20);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function startReplica(dataDir: string): Promise<PortalProcess> {
  return spawnPortal({
    dataDir,
    env: {
      DATABASE_URL: dbUrl,
      SVC_ADMIN_EMAIL: ADMIN_EMAIL,
      SVC_ADMIN_PASSWORD: ADMIN_PASSWORD,
      SVC_UPLOAD_API_KEY: LEGACY_KEY,
      // Replicas sharing a database share the key that encrypts its signing key.
      SVC_IDENTITY_KEY_ENCRYPTION_KEY: KEY_ENCRYPTION_KEY,
      SVC_LOG_LEVEL: 'info', // the 'portal listening' line tells the port it picked
      // The whole fleet is one address (loopback) here, with more requests at once than one site's default.
      SVC_MAX_CONNECTIONS_PER_ADDRESS: '1000',
    },
  });
}

beforeAll(async () => {
  dbUrl = await createTestDatabase();
  // Both replicas start together on the fresh database: migrations and the bootstrap admin
  // must cope with a concurrent start as they would under an orchestrator.
  const procs = await Promise.all([
    startReplica(await makeDataDir('svc-once-a-')),
    startReplica(await makeDataDir('svc-once-b-')),
  ]);
  await Promise.all(procs.map((p) => waitForHealth(p)));
  for (const proc of procs) {
    // Tokens are per site (docs/api.md#identity-provider): each replica's own, for its own requests.
    replicas.push({ proc, url: proc.url, token: await login(proc.url, ADMIN_EMAIL, ADMIN_PASSWORD) });
  }
  db = new pg.Client({ connectionString: dbUrl });
  await db.connect();
});

afterAll(async () => {
  await db?.end().catch(() => undefined);
  await killAll();
});

describe('commands across two portal replicas on one database', () => {
  // The timeout only catches a hang: under load the simulation takes minutes.
  it('delivers every command exactly once, in order, and accepts only legal status reports', {
    timeout: 600_000,
  }, async () => {
    const [a, b] = replicas as [Replica, Replica];
    try {
      // Keys: an msp key, a business key (limit raised above the tier default of 25) and the legacy key.
      const license = async (tier: string, extra: Record<string, unknown> = {}) => {
        const res = await http(a.url, 'POST', '/api/licenses', {
          headers: withToken(a.token),
          json: {
            tier,
            client_id: `once-${tier}-${randomBytes(3).toString('hex')}`,
            name: `exactly-once ${tier}`,
            ...extra,
          },
        });
        expect(res.status, res.text).toBe(201);
        return res.body.license.plaintext_key as string;
      };
      const mspKey = await license('msp');
      const businessKey = await license('business', { max_agents: 100 });
      const proKey = await license('professional');

      const agents = new Map<string, Agent>();
      for (let i = 0; i < AGENTS; i++) {
        const kind = i % 4 === 3 ? 'legacy' : i % 2 === 0 ? 'msp' : 'business';
        const id = `svcd_once${String(i).padStart(2, '0')}_${randomBytes(3).toString('hex')}`;
        const key = kind === 'legacy' ? LEGACY_KEY : kind === 'msp' ? mspKey : businessKey;
        agents.set(id, {
          id,
          key,
          ...(kind === 'legacy' ? { clientId: 'once-legacy' } : {}),
          rogue: i % 3 === 0,
          expected: new Set(),
          delivered: [],
          finished: new Map(),
        });
      }
      const fleet = [...agents.values()];
      // One stored session per client, for the run_scan results to name (the legacy key's session takes the file's client).
      const sessionOf = new Map<string, string>();
      for (const key of [mspKey, businessKey, LEGACY_KEY]) {
        const doc = sessionDoc('session-minimal.json');
        if (key === LEGACY_KEY) doc['metadata']['client_id'] = 'once-legacy';
        const up = await postUpload(a.url, key, sessionParts(doc));
        expect(up.status, up.text).toBe(200);
        sessionOf.set(key, up.body.session_id as string);
      }
      for (const agent of fleet) agent.sessionId = sessionOf.get(agent.key);
      // Two professional agents: they may heartbeat but never receive commands (docs/api.md#agents-and-commands).
      const proAgents = [0, 1].map(
        (i) =>
          ({
            id: `svcd_oncepro${i}_${randomBytes(3).toString('hex')}`,
            key: proKey,
            rogue: false,
            expected: new Set<number>(),
            delivered: [],
            finished: new Map(),
          }) as Agent,
      );

      // First heartbeats register everyone, spread over both replicas; nothing is queued yet.
      await Promise.all(
        [...fleet, ...proAgents].map(async (agent, i) => {
          const res = await call((i % 2 === 0 ? a : b).url, 'POST', '/api/health', {
            headers: withKey(agent.key),
            json: beat(agent, 0),
          });
          expect(res.status, res.text).toBe(200);
          expect(res.body.commands).toEqual([]);
        }),
      );

      // Groups (agent:groups): overlapping memberships, the professional agents in the widest one.
      const groups: Record<string, Agent[]> = {
        'once-alpha': fleet.filter((_, i) => i % 3 === 0),
        'once-beta': fleet.filter((_, i) => i % 2 === 1),
        'once-all': [...fleet, ...proAgents],
      };
      for (const [name, members] of Object.entries(groups)) {
        await Promise.all(
          members.map(async (m, i) => {
            const r = i % 2 === 0 ? a : b;
            const res = await call(r.url, 'POST', '/api/agent-groups', {
              headers: withToken(r.token),
              json: { agent_id: m.id, group_name: name },
            });
            expect(res.status, res.text).toBe(201);
          }),
        );
      }

      // Wave 1: 25 commands per agent, mixed types and priorities, queued through both replicas at once.
      const dispatches: Promise<void>[] = [];
      let posts = 0;
      for (const agent of fleet) {
        for (let n = 0; n < COMMANDS_PER_AGENT; n++) {
          const shape = pick(COMMAND_SHAPES);
          const replica = random() < 0.5 ? a : b;
          const body = { agent_id: agent.id, ...shape, priority: Math.floor(random() * 11) };
          posts++;
          dispatches.push(queue(replica, body).then((q) => expectQueued(agents, q)));
        }
      }
      const groupPosts: [string, number][] = [
        ['once-alpha', 9],
        ['once-beta', 0],
        ['once-all', 5],
        ['once-all', 10],
      ];
      for (const [group, priority] of groupPosts) {
        posts++;
        const replica = pick(replicas);
        dispatches.push(
          (async () => {
            const res = await call(replica.url, 'POST', '/api/agent-commands', {
              headers: withToken(replica.token),
              json: { command_type: 'restart', group_target: group, priority, all_clients: true },
            });
            expect(res.status, res.text).toBe(201);
            expect(res.body.commands).toHaveLength(group === 'once-all' ? fleet.length : groups[group]!.length);
            if (group === 'once-all')
              expect(res.body.skipped.map((s: { agent_id: string }) => s.agent_id).sort()).toEqual(
                proAgents.map((p) => p.id).sort(),
              );
            expectQueued(agents, res.body.commands);
          })(),
        );
      }
      await Promise.all(dispatches);
      expect(allExpected.size).toBe(
        AGENTS * COMMANDS_PER_AGENT + groups['once-alpha']!.length + groups['once-beta']!.length + 2 * fleet.length,
      );

      // Illegal before delivery: acking a command that is still pending is a 409 and changes nothing.
      for (const agent of fleet.slice(0, 5)) {
        const id = [...agent.expected][0] as number;
        await report(agent, id, 'acked', 409, 'acked while pending');
      }
      // An agent may report only on its own commands (docs/api.md#agents-and-commands: 404 otherwise).
      const [x, y] = fleet as [Agent, Agent];
      const foreign = await call(a.url, 'PATCH', '/api/agent-commands', {
        headers: withKey(mspKey),
        json: { command_id: [...y.expected][0], agent_id: x.id, status: 'acked' },
      });
      expect(foreign.status).toBe(404);

      // The agents run; wave 2 is queued while they do, through both replicas.
      const wave2 = { done: false };
      // Wave 2 goes out once every agent has made its first claim, so it meets agents at work.
      let firstRounds = 0;
      let allAtWork = () => {};
      const atWork = new Promise<void>((resolve) => (allAtWork = resolve));
      const running = Promise.all(
        fleet.map((agent) =>
          runAgent(agent, wave2, () => {
            if (++firstRounds === fleet.length) allAtWork();
          }),
        ),
      );
      await Promise.race([atWork, running]);
      const second: Promise<void>[] = [];
      for (const agent of fleet.filter((_, i) => i % 3 !== 2)) {
        for (let n = 0; n < 5; n++) {
          posts++;
          second.push(
            queue(pick(replicas), {
              agent_id: agent.id,
              ...pick(COMMAND_SHAPES),
              priority: Math.floor(random() * 11),
            }).then((q) => expectQueued(agents, q)),
          );
        }
      }
      posts++;
      second.push(
        queue(pick(replicas), {
          command_type: 'set_log_level',
          payload: { level: 'info' },
          group_target: 'once-beta',
          priority: 7,
          all_clients: true,
        }).then((q) => expectQueued(agents, q)),
      );
      // Done even when queueing failed, so the agents end instead of waiting for it.
      await Promise.all(second).finally(() => {
        wave2.done = true;
      });
      await running;

      // Professional agents never get commands, even with group commands about (docs/api.md#agents-and-commands).
      for (const pro of proAgents) {
        const res = await call(pick(replicas).url, 'POST', '/api/health', {
          headers: withKey(pro.key),
          json: beat(pro, 99),
        });
        expect(res.status).toBe(200);
        expect(res.body.commands).toEqual([]);
      }

      const context = `seed ${SEED}; claims ${JSON.stringify(claims)}; ${reports.length} reports`;
      if (process.env['EXACTLY_ONCE_VERBOSE'])
        console.info(
          context,
          `${allExpected.size} commands, ${reports.filter((r) => r.expected === 409).length} illegal reports`,
        );
      expect(claimFailures, context).toEqual([]);

      // Exactly once: no id delivered twice, none missing, nothing unknown.
      const twice = [...deliveries].filter(([, n]) => n > 1).map(([id, n]) => `#${id}×${n}`);
      expect(twice, `commands delivered more than once (${context})`).toEqual([]);
      const missing = [...allExpected].filter((id) => !deliveries.has(id));
      expect(missing, `commands never delivered (${context})`).toEqual([]);
      const unknown = [...deliveries.keys()].filter((id) => !allExpected.has(id));
      expect(unknown, 'delivered ids that were never queued').toEqual([]);
      for (const agent of fleet) {
        expect(new Set(agent.delivered), `${agent.id} got exactly its own commands`).toEqual(agent.expected);
        expect(agent.finished.size, `${agent.id} finished all its commands`).toBe(agent.expected.size);
      }
      expect(orderViolations, context).toEqual([]);
      // The race between replicas did happen (both kinds of claim, many of them concurrent).
      expect(claims.racing, context).toBeGreaterThanOrEqual(AGENTS);
      expect(claims.heartbeat).toBeGreaterThan(0);
      expect(claims.poll).toBeGreaterThan(0);

      // Every report got what the state table says: 200 for legal transitions, 409 for illegal ones.
      const wrong = reports
        .filter((r) => r.got !== r.expected)
        .map((r) => `#${r.commandId} ${r.status} (${r.why}): expected ${r.expected}, got ${r.got}`);
      expect(wrong, context).toEqual([]);
      const illegal = reports.filter((r) => r.expected === 409);
      expect(illegal.length).toBeGreaterThan(20);
      for (const why of [
        'finished before acked (sent → completed|failed)',
        'acked twice',
        'reported again after it finished',
        'acked while pending',
      ]) {
        expect(
          illegal.some((r) => r.why === why),
          `an illegal report of the kind "${why}" was exercised`,
        ).toBe(true);
      }

      // The database agrees: every command final, as reported; one result row each; one audit event each.
      const total = allExpected.size;
      const finalStatus = new Map<number, string>();
      for (const agent of fleet) for (const [id, s] of agent.finished) finalStatus.set(id, s);
      const { rows: statusRows } = await db.query<{ id: string; status: string }>(
        `SELECT id, status FROM agent_commands WHERE agent_id = ANY($1::text[])`,
        [fleet.map((f) => f.id)],
      );
      expect(statusRows).toHaveLength(total);
      const mismatched = statusRows
        .filter((r) => finalStatus.get(Number(r.id)) !== r.status)
        .map((r) => `#${r.id} ${r.status} (reported ${finalStatus.get(Number(r.id))})`);
      expect(mismatched).toEqual([]);
      const completed = statusRows.filter((r) => r.status === 'completed').length;
      const failed = statusRows.filter((r) => r.status === 'failed').length;
      expect(completed + failed).toBe(total);
      expect(completed).toBeGreaterThan(0);
      expect(failed).toBeGreaterThan(0);

      const { rows: resultRows } = await db.query<{ n: number; distinct_ids: number }>(
        `SELECT count(*)::int AS n, count(DISTINCT command_id)::int AS distinct_ids FROM agent_command_results`,
      );
      expect(resultRows[0]).toEqual({ n: completed + failed, distinct_ids: completed + failed });
      // Stored results: ANSI escapes stripped; session_id only for run_scan/push_session (the agents sent one for run_scan).
      const { rows: resultChecks } = await db.query<{ ansi: number; stray_session: number; scan_sessions: number }>(
        `SELECT count(*) FILTER (WHERE r.stdout LIKE '%' || chr(27) || '%')::int AS ansi,
                count(*) FILTER (WHERE c.command_type NOT IN ('run_scan', 'push_session') AND r.session_id IS NOT NULL)::int AS stray_session,
                count(*) FILTER (WHERE c.command_type = 'run_scan' AND c.status = 'completed' AND r.session_id IS NOT NULL)::int AS scan_sessions
         FROM agent_command_results r JOIN agent_commands c ON c.id = r.command_id`,
      );
      expect(resultChecks[0]?.ansi).toBe(0);
      expect(resultChecks[0]?.stray_session).toBe(0);
      expect(resultChecks[0]?.scan_sessions).toBeGreaterThan(0);

      const { rows: auditRows } = await db.query<{
        command_id: string;
        event_type: string;
        actor: string;
        agent_id: string;
      }>(
        `SELECT data->>'command_id' AS command_id, event_type, actor, data->>'agent_id' AS agent_id FROM audit_events WHERE event_type IN ('command_completed', 'command_failed')`,
      );
      expect(auditRows).toHaveLength(completed + failed);
      const audited = new Map<number, { event_type: string; actor: string }>();
      for (const r of auditRows) {
        expect(audited.has(Number(r.command_id)), `one audit event for #${r.command_id}`).toBe(false);
        audited.set(Number(r.command_id), r);
        expect(r.actor).toBe(r.agent_id);
      }
      const auditMismatch = statusRows
        .filter((r) => audited.get(Number(r.id))?.event_type !== `command_${r.status}`)
        .map((r) => `#${r.id}`);
      expect(auditMismatch).toEqual([]);
      const { rows: dispatched } = await db.query<{ n: number; ids: number }>(
        `SELECT count(*)::int AS n, coalesce(sum(jsonb_array_length(data->'command_ids')), 0)::int AS ids FROM audit_events WHERE event_type = 'command_dispatched'`,
      );
      expect(dispatched[0]).toEqual({ n: posts, ids: total });
    } catch (err) {
      // The replicas' own output is what explains a failure here.
      for (const r of replicas) console.error(describeProcess(r.proc));
      throw err;
    }
  });
});
