/**
 * Benchmark: heartbeats (POST /api/health) through nginx to one portal replica, then to two
 * replicas on the same database (docs/deployment-replicas.md): what a second replica adds.
 *
 * One embedded PostgreSQL, one seeded fleet (bench/heartbeat/fleet.ts), two portal processes
 * (both batching, the default), one nginx with two listeners: one proxies to the first replica
 * alone (the baseline), the other balances over both. Same load generator, same fleet order,
 * same backlog restored before every run. Target: two replicas ≥ 1.6 × one.
 *
 * On one small machine the proxy, the load generator, PostgreSQL and the replicas share its
 * cores, so a second replica has no CPU to add. `--replica-cpu=C` gives each replica a budget
 * of C cores (a cgroup; root), as replicas on machines of their own would have: what is then
 * measured is whether two replicas on one database get in each other's way. The budget is
 * counted per `--cpu-period-ms` (default 10; bench/lib/cpu-quota.ts says why not the kernel's 100).
 *
 * The two-replica upstream balances by least connections (`--balance`), as
 * docs/deployment-replicas.md advises. The sides alternate which goes first from round to
 * round, so that a drift over the run (a machine warming up or cooling down) falls on both.
 *
 *   node bench/heartbeat-replicas.ts [--agents=20000 --pending=4000 --pool=10 --replica-cpu=0.25 --cpu-period-ms=10] [shared flags]
 *
 * Results: bench/results/heartbeat-replicas-<timestamp>.json.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { type Nginx, nginxListener, startNginx } from '@svc/test-support/nginx';
import {
  batchCounts,
  batchShape,
  CLIENT_ID,
  databaseUrlOf,
  resetBacklog,
  seed,
  startReplica,
} from './heartbeat/fleet.ts';
import { type LoadResult, loadSettings, runHeartbeatLoad } from './heartbeat/load.ts';
import { problemsOf } from './lib/load.ts';
import { installSignalHandlers, onCleanup, runBenchmark } from './lib/cleanup.ts';
import { type CpuTarget, waitForQuietMachine } from './lib/cpu.ts';
import { DEFAULT_CPU_PERIOD_MS, limitCpu } from './lib/cpu-quota.ts';
import { machineInfo } from './lib/machine.ts';
import { type BenchOptions, OptionsError, parseBenchOptions, usage, wholeNumber } from './lib/options.ts';
import { adminToken, createLicense, type PortalProcess, startPortalProcess } from './lib/portal.ts';
import { table, writeResult } from './lib/report.ts';
import { median, round } from './lib/stats.ts';

const TARGET = 1.6;

interface Options extends BenchOptions {
  agents: number;
  pending: number;
  pool: number;
  /** Each replica's CPU budget in cores; null: none. */
  replicaCpu: number | null;
  /** The period the budget is counted in, ms. */
  cpuPeriodMs: number;
  /** How nginx spreads requests over two replicas. */
  balance: Balance;
  /** Seconds of load through both replicas, before any budget, to reach steady state. */
  steadyS: number;
}

function parseOptions(argv: string[]): Options | 'help' {
  const own = { agents: 20_000, pending: 4_000, pool: 10, steady: 20 };
  let replicaCpu: number | null = null;
  let cpuPeriodMs = DEFAULT_CPU_PERIOD_MS;
  let balance: Balance = 'least-conn';
  const rest: string[] = [];
  for (const arg of argv) {
    const how = /^--balance=(.*)$/.exec(arg);
    if (how !== null) {
      if (how[1] !== 'least-conn' && how[1] !== 'round-robin')
        throw new OptionsError('--balance must be least-conn or round-robin');
      balance = how[1];
      continue;
    }
    const cpu = /^--replica-cpu=(.+)$/.exec(arg);
    if (cpu !== null) {
      replicaCpu = Number(cpu[1]);
      if (!Number.isFinite(replicaCpu) || replicaCpu < 0.05 || replicaCpu > 64)
        throw new OptionsError('--replica-cpu must be a number of cores from 0.05 to 64');
      continue;
    }
    const period = /^--cpu-period-ms=(.*)$/.exec(arg);
    if (period !== null) {
      cpuPeriodMs = wholeNumber('cpu-period-ms', period[1], DEFAULT_CPU_PERIOD_MS, 1, 1000);
      continue;
    }
    const m = /^--(agents|pending|pool|steady)=(\d+)$/.exec(arg);
    if (m === null) {
      rest.push(arg);
      continue;
    }
    const n = Number(m[2]);
    if (!Number.isSafeInteger(n) || n < (m[1] === 'steady' ? 0 : 1))
      throw new OptionsError(
        `--${m[1]} must be a ${m[1] === 'steady' ? 'whole number of seconds' : 'positive whole number'}`,
      );
    own[m[1] as keyof typeof own] = n;
  }
  if (own.pending > own.agents * 10) throw new OptionsError('--pending must be at most 10 per agent');
  if (own.pool > 100) throw new OptionsError('--pool must be at most 100');
  if (replicaCpu !== null && replicaCpu * cpuPeriodMs < 1)
    throw new OptionsError("--replica-cpu × --cpu-period-ms must be at least 1 ms, the kernel's smallest quota");
  const shared = parseBenchOptions(rest, {
    BENCH_DURATION: '10',
    BENCH_WARMUP: '3',
    BENCH_ROUNDS: '3',
    BENCH_QUIET_WAIT: '30',
    ...process.env,
  });
  const { steady, ...sizes } = own;
  return shared === 'help' ? 'help' : { ...shared, ...sizes, steadyS: steady, replicaCpu, cpuPeriodMs, balance };
}

type Balance = 'least-conn' | 'round-robin';

/** nginx in front of the replicas: `one` proxies to the first alone, `two` to both. */
async function startProxy(
  first: PortalProcess,
  second: PortalProcess,
  balance: Balance,
): Promise<{ nginx: Nginx; one: string; two: string }> {
  const [one, two] = [await nginxListener(), await nginxListener()];
  const proxy = (upstream: string) =>
    `location / { proxy_pass http://${upstream}; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_set_header X-Forwarded-For $remote_addr; }`;
  const nginx = await startNginx(
    [
      { listener: one, body: proxy('one') },
      { listener: two, body: proxy('two') },
    ],
    `upstream one { server 127.0.0.1:${first.port}; keepalive 64; }
  upstream two { ${balance === 'least-conn' ? 'least_conn; ' : ''}server 127.0.0.1:${first.port}; server 127.0.0.1:${second.port}; keepalive 64; }`,
    { workers: 'auto', accessLog: false, workerConnections: 2048 },
  );
  onCleanup('stop nginx', () => nginx.stop());
  return { nginx, one: `http://127.0.0.1:${one.port}`, two: `http://127.0.0.1:${two.port}` };
}

type Side = 'one replica' | 'two replicas';

async function benchmark(opts: Options): Promise<void> {
  const started = new Date();
  const machine = machineInfo();
  console.log(
    `heartbeat replicas benchmark: ${opts.agents} agents, ${opts.pending} pending commands, ${opts.connections} connections through nginx (two replicas: ${opts.balance}), pool ${opts.pool} per replica, ${opts.rounds} round(s) of ${opts.warmupS} s warm-up + ${opts.durationS} s`,
  );
  console.log(
    `machine: ${machine.cpus} CPUs (${machine.cpuModel}), load average ${os
      .loadavg()
      .map((v) => round(v, 2))
      .join(' ')}`,
  );
  // GET /metrics on both replicas, read before and after each run: how many heartbeats each batch statement wrote.
  const metrics = { SVC_METRICS_TOKEN: randomBytes(24).toString('hex') };
  const first = await startPortalProcess({
    echo: opts.verbose,
    env: { SVC_DB_POOL_MAX: String(opts.pool), ...metrics },
  });
  const key = await createLicense(first, await adminToken(first), {
    tier: 'business',
    client_id: CLIENT_ID,
    name: 'replicas bench',
  });
  const databaseUrl = databaseUrlOf(first);
  const db = new pg.Client({ connectionString: databaseUrl, application_name: 'bench-control' });
  db.on('error', () => undefined);
  await db.connect();
  onCleanup('close the control connection', () => db.end().catch(() => undefined));
  const license = (await db.query<{ id: string }>('SELECT id FROM licenses WHERE client_id = $1', [CLIENT_ID])).rows[0];
  if (!license) throw new Error('the bench license is not in the database');
  const seeded = await seed(db, opts, license.id);
  console.log(`seeded ${opts.agents} agents and ${seeded.commands} pending commands`);
  // --profile: the second replica (it serves only the two-replica runs) writes a V8 CPU profile
  // when it stops; its figures are slowed by the profiler.
  const profileDir = path.join(os.tmpdir(), `heartbeat-replicas-profile-${process.pid}`);
  const second = await startReplica(first, databaseUrl, {
    ...opts,
    env: metrics,
    nodeArgs: opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
  });
  if (opts.profile) console.log(`profiling the second replica into ${profileDir} (written when it stops)`);
  const { nginx, one, two } = await startProxy(first, second, opts.balance);
  console.log(`replicas at ${first.url} and ${second.url}; nginx (pid ${nginx.pid}) at ${one} (one) and ${two} (two)`);
  const common = loadSettings(key, opts);
  // Both replicas run their hot code optimised before anything is measured, as a portal that has
  // been up for a while does: under a small CPU budget the first rounds' warm-up alone does not
  // get there, and the replica measured first would pay for it.
  if (opts.steadyS > 0) {
    console.log(`bringing both replicas to steady state (${opts.steadyS} s of heartbeats through both, no budget)`);
    await resetBacklog(db);
    const steady = await runHeartbeatLoad({ ...common, title: 'steady state', url: two, durationS: opts.steadyS });
    const problem = problemsOf(steady);
    if (problem) throw new Error(problem);
  }
  if (opts.replicaCpu !== null) {
    limitCpu(first.child.pid, opts.replicaCpu, 'replica-1', opts.cpuPeriodMs);
    limitCpu(second.child.pid, opts.replicaCpu, 'replica-2', opts.cpuPeriodMs);
    console.log(`each replica has a budget of ${opts.replicaCpu} cores, counted per ${opts.cpuPeriodMs} ms`);
  }

  const cpu: CpuTarget[] = [
    { name: 'replica 1', pid: () => first.child.pid },
    { name: 'replica 2', pid: () => second.child.pid },
    { name: 'nginx', pid: () => nginx.pid, withChildren: true },
    { name: 'postgres', pid: () => first.postmasterPid(), withChildren: true },
  ];
  const sides: { side: Side; url: string }[] = [
    { side: 'one replica', url: one },
    { side: 'two replicas', url: two },
  ];
  type Shape = ReturnType<typeof batchShape>;
  const runs: (LoadResult & { side: Side; round: number; batches: { replica1: Shape; replica2: Shape } })[] = [];
  const readCounts = () =>
    Promise.all([batchCounts(first, metrics.SVC_METRICS_TOKEN), batchCounts(second, metrics.SVC_METRICS_TOKEN)]);
  for (let r = 1; r <= opts.rounds; r++)
    for (const { side, url } of r % 2 === 1 ? sides : [...sides].reverse()) {
      if (opts.quietWaitS > 0)
        await waitForQuietMachine({ maxBusyPercent: opts.quietBusyPercent, timeoutMs: opts.quietWaitS * 1000 });
      if (opts.warmupS > 0) {
        await resetBacklog(db);
        const warm = await runHeartbeatLoad({ ...common, title: `${side} warm-up`, url, durationS: opts.warmupS });
        const problem = problemsOf(warm);
        if (problem) throw new Error(problem);
      }
      await resetBacklog(db);
      const before = await readCounts();
      const measured = await runHeartbeatLoad({
        ...common,
        title: `${side} #${r}`,
        url,
        durationS: opts.durationS,
        cpu,
      });
      const problem = problemsOf(measured);
      if (problem) throw new Error(problem);
      const after = await readCounts();
      const batches = { replica1: batchShape(before[0], after[0]), replica2: batchShape(before[1], after[1]) };
      runs.push({ ...measured, side, round: r, batches });
      const pct = (name: string) => `${measured.cpuPercent[name]?.toFixed(0) ?? '-'}%`;
      const shape = (b: Shape) => `${b.meanBatch} per batch, ${Math.round(b.batchedShare * 100)}% batched`;
      console.log(
        `  ${`${side} #${r}`.padEnd(16)} ${measured.rps.toFixed(0).padStart(6)} hb/s  p50 ${measured.latencyMs.p50.toFixed(2)} ms  p99 ${measured.latencyMs.p99.toFixed(2)} ms  ` +
          `(CPU replica 1 ${pct('replica 1')}, replica 2 ${pct('replica 2')}, nginx ${pct('nginx')}, postgres ${pct('postgres')}, loadgen ${pct('loadgen')}, other ${pct('other')})`,
      );
      console.log(
        `  ${''.padEnd(16)} replica 1: ${shape(batches.replica1)}${side === 'two replicas' ? `; replica 2: ${shape(batches.replica2)}` : ''}`,
      );
    }

  const summary = (side: Side) => {
    const mine = runs.filter((r) => r.side === side);
    return {
      rps: round(median(mine.map((r) => r.rps)), 1),
      p50Ms: round(median(mine.map((r) => r.latencyMs.p50)), 2),
      p99Ms: round(median(mine.map((r) => r.latencyMs.p99)), 2),
    };
  };
  const oneSummary = summary('one replica');
  const twoSummary = summary('two replicas');
  const ratio = round(twoSummary.rps / oneSummary.rps, 3);
  console.log(
    `\n${table([
      ['median', 'hb/s', 'p50 ms', 'p99 ms'],
      ['one replica (baseline)', oneSummary.rps, oneSummary.p50Ms, oneSummary.p99Ms],
      ['two replicas', twoSummary.rps, twoSummary.p50Ms, twoSummary.p99Ms],
    ])}`,
  );
  console.log(`target: two replicas ≥ ${TARGET} × one: ${ratio >= TARGET ? 'met' : 'NOT met'} (${ratio})`);
  const file = writeResult(
    'heartbeat-replicas',
    { started, machine, options: opts, runs, oneReplica: oneSummary, twoReplicas: twoSummary, ratio, target: TARGET },
    started,
  );
  console.log(`result written to ${file}`);
}

const help = (): string =>
  [
    usage('bench/heartbeat-replicas.ts'),
    '  --agents=N     fleet size (default 20000)',
    '  --pending=N    pending commands (default 4000)',
    '  --pool=N       database pool of each replica (default 10)',
    '  --replica-cpu=C  a CPU budget of C cores for each replica (cgroup; root)',
    `  --cpu-period-ms=P  the period the budget is counted in (default ${DEFAULT_CPU_PERIOD_MS})`,
    '  --balance=B    how nginx spreads requests over two replicas: least-conn (default) or round-robin',
    '  --steady=S     seconds of load through both replicas before the budget and the rounds (default 20)',
    '  (defaults here: --duration=10 --warmup=3 --rounds=3 --quiet-wait=30)',
  ].join('\n');

installSignalHandlers();
await runBenchmark(async () => {
  const opts = parseOptions(process.argv.slice(2));
  if (opts === 'help') {
    console.log(help());
    return;
  }
  await benchmark(opts);
});
