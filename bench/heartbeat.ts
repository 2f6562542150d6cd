/**
 * Benchmark: POST /api/health (the daemon heartbeat) with a fleet of 100,000 agents and a
 * backlog of 20,000 pending commands, the agents in a shuffled fleet order (bench/heartbeat/load.ts).
 *
 * Sides, all in one run, against the SAME embedded PostgreSQL (the portal's own):
 * - portal: the real portal process (Fastify, key check, validation, Kysely, pg pool);
 * - baseline: a bare node:http server (its own process, this file in baseline mode) that
 *   parses the JSON body, runs the portal's heartbeat statement (the UPDATE of the agent
 *   plus the FOR UPDATE SKIP LOCKED claim of its commands: the one text in
 *   packages/portal/src/agents/claim-sql.ts that the portal runs too) through `pg` with a pool of the
 *   same size, and answers the same JSON. Same load generator (autocannon, same
 *   connections, same agent order), same SQL, same driver, same database: the ratio
 *   is what the portal's own layers (Fastify, auth, validation, serialization, Kysely)
 *   cost on top of the unavoidable work. The run checks that the two sides really send
 *   the same statement (PostgreSQL's statement log) and answer the same commands.
 * - single path: the portal again, on the same database, with SVC_HEARTBEAT_BATCH_MAX=0 (every
 *   heartbeat its own statement and commit, as before batching): the batched portal's baseline
 *   (`--no-single` skips it);
 * - pgbench (informational): the same statement straight from pgbench (no HTTP, no Node),
 *   with as many database connections as the pool: the database's own ceiling here.
 *
 * Before every warm-up and every measured run the backlog is restored (every claimed
 * command back to `pending`, VACUUM, CHECKPOINT), so every run sees the same backlog.
 *
 * - what-if (informational, not in the ratio): the baseline again with the statement as a
 *   named prepared statement, and pgbench -M prepared with and without synchronous
 *   commit: what the statement itself would allow if the portal changed how it sends it.
 *
 *   node bench/heartbeat.ts [--duration=15 --warmup=5 --connections=50 --rounds=2]
 *                           [--agents=100000 --pending=20000 --pool=10 --no-pgbench --no-what-if --no-single]
 *
 * Results: bench/results/heartbeat-<timestamp>.json.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import pg from 'pg';
import { startBaselineServer } from './heartbeat/baseline.ts';
import {
  agentIdOf,
  CLIENT_ID,
  databaseUrlOf,
  PATH,
  resetBacklog,
  seed,
  startReplica,
  VERSION,
} from './heartbeat/fleet.ts';
import { type LoadResult, loadSettings, runHeartbeatLoad } from './heartbeat/load.ts';
import { problemsOf } from './lib/load.ts';
import { normalizeSql, PGBENCH_VARIANTS, type PgbenchResult, runPgbench } from './heartbeat/pgbench.ts';
import type { NodeChild } from './lib/children.ts';
import { interrupted, onCleanup } from './lib/cleanup.ts';
import { waitForQuietMachine, type CpuTarget } from './lib/cpu.ts';
import { machineInfo } from './lib/machine.ts';
import { OptionsError, parseBenchOptions, usage, type BenchOptions } from './lib/options.ts';
import { adminToken, createLicense, startPortalProcess, type PortalProcess } from './lib/portal.ts';
import { summarizeProfile } from './lib/profile-summary.ts';
import { RESULTS_DIR, stampOf, table, writeResult } from './lib/report.ts';
import { median, round } from './lib/stats.ts';
import { benchmarkMain } from './lib/main.ts';

const run = promisify(execFile);
/** The batched portal's throughput and its own CPU per heartbeat. */
const TARGET_HEARTBEATS_PER_SECOND = 6000;
const TARGET_SERVER_CPU_US = 100;

// ---------------------------------------------------------------------------------------
// Benchmark mode.
// ---------------------------------------------------------------------------------------

interface HeartbeatOptions extends BenchOptions {
  agents: number;
  pending: number;
  pool: number;
  pgbench: boolean;
  /** Also measure what the statement costs prepared (and without synchronous commit): informational, not in the ratio. */
  whatIf: boolean;
  /** Also run the portal with batching off (today's single path), the batched path's baseline. */
  single: boolean;
}

/** Our own flags first, the shared ones (bench/lib/options.ts) after; defaults suited to this benchmark. */
function parseOptions(argv: string[]): HeartbeatOptions | 'help' {
  const own = { agents: 100_000, pending: 20_000, pool: 10, pgbench: true, whatIf: true, single: true };
  const rest: string[] = [];
  for (const arg of argv) {
    const m = /^--(agents|pending|pool)=(\d+)$/.exec(arg);
    if (m) {
      const n = Number(m[2]);
      if (!Number.isSafeInteger(n) || n < 1) throw new OptionsError(`--${m[1]} must be a positive whole number`);
      own[m[1] as 'agents' | 'pending' | 'pool'] = n;
    } else if (arg === '--no-pgbench') own.pgbench = false;
    else if (arg === '--no-what-if') own.whatIf = false;
    else if (arg === '--no-single') own.single = false;
    else rest.push(arg);
  }
  if (own.pending > own.agents * 10) throw new OptionsError('--pending must be at most 10 per agent');
  if (own.pool > 100) throw new OptionsError('--pool must be at most 100');
  const defaults: NodeJS.ProcessEnv = {
    BENCH_DURATION: '15',
    BENCH_WARMUP: '5',
    BENCH_ROUNDS: '2',
    BENCH_QUIET_WAIT: '30',
    ...process.env,
  };
  const shared = parseBenchOptions(rest, defaults);
  if (shared === 'help') return 'help';
  return { ...shared, ...own };
}

function log(message: string): void {
  console.log(message);
}

const heartbeatBody = (agentId: string): string =>
  JSON.stringify({
    agent_id: agentId,
    version: VERSION,
    timestamp: new Date().toISOString(),
    status: 'running',
    uptime_seconds: 3600,
  });

async function postHeartbeat(url: string, key: string, agentId: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}${PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: heartbeatBody(agentId),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : text };
}

// --- fairness checks ---------------------------------------------------------------------

interface Captured {
  /** The statement, comments and whitespace collapsed. */
  sql: string;
  /** `<unnamed>` (parsed and planned on every execution) or the prepared statement's name. */
  statementName: string;
}

/** The heartbeat statements PostgreSQL logged (log_statement = all) from `offset` on. */
function loggedHeartbeatStatements(logFile: string, offset: number): Captured[] {
  const text = fs.readFileSync(logFile, 'utf8').slice(offset);
  // One entry per log line prefix (a timestamp); a statement's own line breaks stay inside its entry.
  const entries = text.split(/\n(?=\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})/);
  const out: Captured[] = [];
  for (const e of entries) {
    const m = /(?:execute ([^:]+)|statement): ([\s\S]*)$/.exec(e);
    if (m?.[2]?.includes('WITH hb AS')) out.push({ sql: normalizeSql(m[2]), statementName: m[1] ?? '(simple query)' });
  }
  return out;
}

interface StatementLog {
  /** Send one heartbeat to `url` and return the heartbeat statement PostgreSQL logged for it. */
  capture(url: string): Promise<Captured | undefined>;
  close(): Promise<void>;
}

/** Turn PostgreSQL's statement log on (it stays on until close()), or null when its file cannot be read here. */
async function openStatementLog(
  db: pg.Client,
  portal: PortalProcess,
  key: string,
  agentId: string,
): Promise<StatementLog | null> {
  const logFile = path.join(portal.dataDir, 'postgres-log', 'postgresql.log');
  try {
    fs.accessSync(logFile, fs.constants.R_OK);
  } catch {
    return null;
  }
  await db.query(`ALTER SYSTEM SET log_statement = 'all'`);
  await db.query('SELECT pg_reload_conf()');
  await sleep(300);
  return {
    async capture(url) {
      const offset = fs.statSync(logFile).size;
      const res = await postHeartbeat(url, key, agentId);
      if (res.status !== 200)
        throw new Error(`heartbeat for the SQL check: HTTP ${res.status} ${JSON.stringify(res.body)}`);
      await sleep(300);
      return loggedHeartbeatStatements(logFile, offset)[0];
    },
    async close() {
      await db.query('ALTER SYSTEM RESET log_statement');
      await db.query('SELECT pg_reload_conf()');
    },
  };
}

interface SqlCheck {
  identical: boolean | null;
  note: string;
  portalStatementName?: string;
  baselineStatementName?: string;
  portal?: string;
  baseline?: string;
}

function compareCaptured(portal: Captured | undefined, baseline: Captured | undefined): SqlCheck {
  if (portal === undefined || baseline === undefined)
    return { identical: null, note: 'the statement log did not show both statements: not checked' };
  const sameText = portal.sql === baseline.sql;
  const sameMode = (portal.statementName === '<unnamed>') === (baseline.statementName === '<unnamed>');
  const identical = sameText && sameMode;
  const note = identical
    ? `the portal and the baseline sent the same heartbeat statement (comments and whitespace aside), both ${portal.statementName === '<unnamed>' ? 'unnamed (parsed and planned on every execution)' : 'as a named prepared statement'}`
    : !sameText
      ? 'the statements DIFFER: the portal no longer sends agents/claim-sql.ts as it is, the ratio is not a like-for-like comparison'
      : `the statements are the same text but sent differently (portal ${portal.statementName}, baseline ${baseline.statementName})`;
  return {
    identical,
    note,
    portalStatementName: portal.statementName,
    baselineStatementName: baseline.statementName,
    ...(identical ? {} : { portal: portal.sql, baseline: baseline.sql }),
  };
}

/** Both sides hand the same agent the same commands in the same order (received_at aside). */
async function compareAnswers(
  db: pg.Client,
  portalUrl: string,
  baselineUrl: string,
  key: string,
  agentId: string,
): Promise<{ same: boolean; commands: number; portal: unknown; baseline: unknown }> {
  const restore = () =>
    db.query(`UPDATE agent_commands SET status = 'pending', sent_at = NULL WHERE agent_id = $1`, [agentId]);
  await restore();
  const p = await postHeartbeat(portalUrl, key, agentId);
  await restore();
  const b = await postHeartbeat(baselineUrl, key, agentId);
  await restore();
  const strip = (body: any) =>
    typeof body === 'object' && body !== null ? { ...body, received_at: typeof body.received_at } : body;
  const same = p.status === 200 && b.status === 200 && JSON.stringify(strip(p.body)) === JSON.stringify(strip(b.body));
  return {
    same,
    commands: Array.isArray(p.body?.commands) ? p.body.commands.length : -1,
    portal: p.body,
    baseline: b.body,
  };
}

// --- load ------------------------------------------------------------------------------------

// --- main ------------------------------------------------------------------------------------

type Side = 'baseline' | 'single' | 'portal';

function cpuCell(v: number | null | undefined): string {
  return v === null || v === undefined ? '-' : `${v.toFixed(0)}%`;
}

async function benchmark(opts: HeartbeatOptions): Promise<void> {
  const started = new Date();
  const machine = machineInfo();
  const loadAtStart = os.loadavg().map((v) => round(v, 2));
  log(
    `heartbeat benchmark: POST ${PATH} for the agents of ${opts.agents.toLocaleString('en')} with ${opts.pending.toLocaleString('en')} pending commands; ` +
      `${opts.connections} connections, DB pool ${opts.pool}, ${opts.warmupS} s warm-up + ${opts.durationS} s measured, ${opts.rounds} round(s) of baseline, single path, then portal`,
  );
  log(
    `machine: ${machine.cpus} CPUs (${machine.cpuModel}), ${machine.memoryGiB} GiB, Node ${machine.node}, ${machine.platform}, load average ${loadAtStart.join(' ')}`,
  );

  const profileDir = path.join(RESULTS_DIR, `heartbeat-${stampOf(started)}-profile`);
  if (opts.profile)
    log(`profiling the portal into ${profileDir}: its figures are slowed by the profiler, do not report them`);
  log('starting the portal (embedded PostgreSQL in a fresh temp dir) ...');
  const portal = await startPortalProcess({
    echo: opts.verbose,
    env: { SVC_DB_POOL_MAX: String(opts.pool) },
    nodeArgs: opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
  });
  log(`portal up at ${portal.url} (pid ${portal.child.pid}, PostgreSQL on port ${portal.pgPort})`);

  const token = await adminToken(portal);
  const key = await createLicense(portal, token, { tier: 'business', client_id: CLIENT_ID, name: 'heartbeat bench' });
  const databaseUrl = databaseUrlOf(portal);
  const db = new pg.Client({ connectionString: databaseUrl, application_name: 'bench-control' });
  // Stopping the portal stops its PostgreSQL under this connection: that must not crash the benchmark.
  db.on('error', () => undefined);
  await db.connect();
  onCleanup('close the control connection', () => db.end().catch(() => undefined));
  const postgresVersion = (await db.query<{ version: string }>('SELECT version()')).rows[0]?.version ?? null;
  const license = (await db.query<{ id: string }>('SELECT id FROM licenses WHERE client_id = $1', [CLIENT_ID])).rows[0];
  if (!license) throw new Error('the bench license is not in the database');

  const t0 = Date.now();
  const seeded = await seed(db, opts, license.id);
  log(
    `seeded ${opts.agents.toLocaleString('en')} agents and ${seeded.commands.toLocaleString('en')} pending commands (2 each for every ${seeded.firstAgentWithCommands}th agent) in SQL in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
  );

  // What the portal sends decides how the baseline sends it: the same text, unnamed or prepared alike.
  const probeAgent = agentIdOf(seeded.firstAgentWithCommands);
  const statementLog = await openStatementLog(db, portal, key, probeAgent);
  let sqlCheck: SqlCheck;
  let baseline: { url: string; child: NodeChild };
  let baselinePrepared = false;
  try {
    const portalStatement = await statementLog?.capture(portal.url);
    baselinePrepared = portalStatement !== undefined && portalStatement.statementName !== '<unnamed>';
    baseline = await startBaselineServer(
      { databaseUrl, poolMax: opts.pool, tier: 'business', clientId: CLIENT_ID, prepared: baselinePrepared },
      opts.verbose,
    );
    log(
      `baseline (node:http + pg, pool ${opts.pool}${baselinePrepared ? ', named prepared statement like the portal' : ''}) up at ${baseline.url} (pid ${baseline.child.pid})`,
    );
    sqlCheck =
      statementLog === null
        ? { identical: null, note: "PostgreSQL's log file cannot be read here: not checked" }
        : compareCaptured(portalStatement, await statementLog.capture(baseline.url));
  } finally {
    await statementLog?.close();
  }
  log(`check: ${sqlCheck.note}`);
  if (sqlCheck.identical === false) log(`  portal:   ${sqlCheck.portal}\n  baseline: ${sqlCheck.baseline}`);

  const answers = await compareAnswers(db, portal.url, baseline.url, key, probeAgent);
  if (!answers.same)
    throw new Error(
      `the portal and the baseline answer differently for ${probeAgent}:\nportal:   ${JSON.stringify(answers.portal)}\nbaseline: ${JSON.stringify(answers.baseline)}`,
    );
  log(`check: both answer ${probeAgent} the same ${answers.commands} commands in the same order`);
  await resetBacklog(db);

  // Today's path in the same run: a second portal on the same database writing every heartbeat alone.
  const single = opts.single ? await startReplica(portal, databaseUrl, { ...opts, batchMax: '0' }) : null;
  if (single) {
    const same = await compareAnswers(db, single.url, baseline.url, key, probeAgent);
    if (!same.same) throw new Error(`the single-path portal answers differently: ${JSON.stringify(same.portal)}`);
    log(`single-path portal (SVC_HEARTBEAT_BATCH_MAX=0) up at ${single.url}; it answers ${probeAgent} the same`);
    await resetBacklog(db);
  }
  const postgres: CpuTarget = { name: 'postgres', pid: () => portal.postmasterPid(), withChildren: true };
  const targets: { side: Side; url: string; cpu: CpuTarget[] }[] = [
    { side: 'baseline', url: baseline.url, cpu: [{ name: 'server', pid: () => baseline.child.pid }, postgres] },
    ...(single
      ? [{ side: 'single' as const, url: single.url, cpu: [{ name: 'server', pid: () => single.child.pid }, postgres] }]
      : []),
    { side: 'portal', url: portal.url, cpu: [{ name: 'server', pid: () => portal.child.pid }, postgres] },
  ];
  const common = loadSettings(key, opts);
  const runs: (LoadResult & { side: Side; round: number; machineBusyBeforePercent: number | null; claimed: number })[] =
    [];
  const rows: (string | number)[][] = [
    [
      'run',
      'hb/s',
      'p50 ms',
      'p90 ms',
      'p99 ms',
      'max ms',
      'server CPU',
      'postgres CPU',
      'loadgen CPU',
      'other CPU',
      'server µs/hb',
      'postgres µs/hb',
    ],
  ];

  for (let r = 1; r <= opts.rounds; r++) {
    for (const target of targets) {
      const label = `${target.side} #${r}`;
      let busy: number | null = null;
      if (opts.quietWaitS > 0) {
        const quiet = await waitForQuietMachine({
          maxBusyPercent: opts.quietBusyPercent,
          timeoutMs: opts.quietWaitS * 1000,
          signal: interrupted,
        });
        busy = quiet.busyPercent;
        if (busy !== null && busy > opts.quietBusyPercent)
          log(`  (the machine is still busy: ${busy}% of a core used by others; running ${label} anyway)`);
      }
      if (opts.warmupS > 0) {
        await resetBacklog(db);
        const warm = await runHeartbeatLoad({
          ...common,
          title: `${label} warm-up`,
          url: target.url,
          durationS: opts.warmupS,
        });
        const problem = problemsOf(warm);
        if (problem) throw new Error(problem);
      }
      await resetBacklog(db);
      const measured = await runHeartbeatLoad({
        ...common,
        title: label,
        url: target.url,
        durationS: opts.durationS,
        cpu: target.cpu,
      });
      const problem = problemsOf(measured);
      if (problem) throw new Error(problem);
      const { rows: sent } = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM agent_commands WHERE status = 'sent'`,
      );
      runs.push({ ...measured, side: target.side, round: r, machineBusyBeforePercent: busy, claimed: sent[0]?.n ?? 0 });
      const l = measured.latencyMs;
      log(
        `  ${label.padEnd(12)} ${measured.rps.toFixed(0).padStart(6)} hb/s   p50 ${l.p50.toFixed(2)} ms   p99 ${l.p99.toFixed(2)} ms   (${measured.requests2xx} heartbeats in ${measured.durationS} s, ` +
          `${sent[0]?.n ?? 0} commands handed out; CPU server ${cpuCell(measured.cpuPercent['server'])}, postgres ${cpuCell(measured.cpuPercent['postgres'])}, loadgen ${cpuCell(measured.cpuPercent['loadgen'])}, other ${cpuCell(measured.cpuPercent['other'])})`,
      );
      rows.push([
        label,
        Math.round(measured.rps),
        l.p50.toFixed(2),
        l.p90.toFixed(2),
        l.p99.toFixed(2),
        l.max.toFixed(2),
        cpuCell(measured.cpuPercent['server']),
        cpuCell(measured.cpuPercent['postgres']),
        cpuCell(measured.cpuPercent['loadgen']),
        cpuCell(measured.cpuPercent['other']),
        measured.cpuUsPerRequest['server'] ?? '-',
        measured.cpuUsPerRequest['postgres'] ?? '-',
      ]);
    }
  }

  // What-if (not part of the ratio): the baseline with the statement prepared once per connection.
  let whatIfPrepared: LoadResult | null = null;
  // (Pointless when the portal, and so the baseline, already prepare it.)
  if (opts.whatIf && !baselinePrepared) {
    const prepared = await startBaselineServer(
      { databaseUrl, poolMax: opts.pool, tier: 'business', clientId: CLIENT_ID, prepared: true },
      opts.verbose,
    );
    if (opts.quietWaitS > 0)
      await waitForQuietMachine({
        maxBusyPercent: opts.quietBusyPercent,
        timeoutMs: opts.quietWaitS * 1000,
        signal: interrupted,
      });
    if (opts.warmupS > 0) {
      await resetBacklog(db);
      await runHeartbeatLoad({ ...common, title: 'what-if warm-up', url: prepared.url, durationS: opts.warmupS });
    }
    await resetBacklog(db);
    whatIfPrepared = await runHeartbeatLoad({
      ...common,
      title: 'what-if: baseline, named prepared statement',
      url: prepared.url,
      durationS: opts.durationS,
      cpu: [{ name: 'server', pid: () => prepared.child.pid }, postgres],
    });
    const problem = problemsOf(whatIfPrepared);
    if (problem) throw new Error(problem);
    await prepared.child.stop(5_000);
    const l = whatIfPrepared.latencyMs;
    log(
      `  what-if: baseline with a named prepared statement ${whatIfPrepared.rps.toFixed(0)} hb/s   p50 ${l.p50.toFixed(2)} ms   p99 ${l.p99.toFixed(2)} ms   (CPU server ${cpuCell(whatIfPrepared.cpuPercent['server'])}, postgres ${cpuCell(whatIfPrepared.cpuPercent['postgres'])}, ${whatIfPrepared.cpuUsPerRequest['postgres']} µs/hb in postgres; other ${cpuCell(whatIfPrepared.cpuPercent['other'])})`,
    );
    rows.push([
      'what-if prepared',
      Math.round(whatIfPrepared.rps),
      l.p50.toFixed(2),
      l.p90.toFixed(2),
      l.p99.toFixed(2),
      l.max.toFixed(2),
      cpuCell(whatIfPrepared.cpuPercent['server']),
      cpuCell(whatIfPrepared.cpuPercent['postgres']),
      cpuCell(whatIfPrepared.cpuPercent['loadgen']),
      cpuCell(whatIfPrepared.cpuPercent['other']),
      whatIfPrepared.cpuUsPerRequest['server'] ?? '-',
      whatIfPrepared.cpuUsPerRequest['postgres'] ?? '-',
    ]);
  }

  const pgbench: (PgbenchResult | { variant: string; skipped: string })[] = [];
  if (opts.pgbench) {
    let available = true;
    try {
      await run('pgbench', ['--version']);
    } catch {
      available = false;
      log('pgbench is not on PATH: no pgbench figures');
    }
    for (const variant of available ? PGBENCH_VARIANTS.filter((v) => opts.whatIf || v.mode === 'extended') : []) {
      try {
        if (opts.quietWaitS > 0)
          await waitForQuietMachine({
            maxBusyPercent: opts.quietBusyPercent,
            timeoutMs: opts.quietWaitS * 1000,
            signal: interrupted,
          });
        await resetBacklog(db);
        const r = await runPgbench(databaseUrl, opts, { version: VERSION, clientId: CLIENT_ID }, postgres, variant);
        pgbench.push(r);
        log(
          `  ${variant.name}: ${r.tps.toFixed(0)} tx/s   p50 ${r.latencyMs.p50.toFixed(2)} ms   p99 ${r.latencyMs.p99.toFixed(2)} ms   (${r.clients} connections; postgres CPU ${cpuCell(r.postgresCpuPercent)}, ${r.postgresCpuUsPerTransaction} µs/tx)`,
        );
      } catch (err) {
        pgbench.push({ variant: variant.name, skipped: err instanceof Error ? err.message : String(err) });
        log(`  ${variant.name} failed: ${err instanceof Error ? err.message : err}`);
      }
    }
  }

  const side = (s: Side) => {
    const mine = runs.filter((r) => r.side === s);
    return {
      rps: round(median(mine.map((r) => r.rps)), 1),
      p50Ms: round(median(mine.map((r) => r.latencyMs.p50)), 3),
      p99Ms: round(median(mine.map((r) => r.latencyMs.p99)), 3),
      serverCpuUsPerHeartbeat: round(median(mine.map((r) => r.cpuUsPerRequest['server'] ?? Number.NaN)), 1),
      postgresCpuUsPerHeartbeat: round(median(mine.map((r) => r.cpuUsPerRequest['postgres'] ?? Number.NaN)), 1),
      runs: mine.length,
    };
  };
  const baselineSummary = side('baseline');
  const portalSummary = side('portal');
  const singleSummary = single ? side('single') : null;
  const summaryRow = (label: string, m: typeof portalSummary) => [
    label,
    Math.round(m.rps),
    m.p50Ms.toFixed(2),
    m.p99Ms.toFixed(2),
    m.serverCpuUsPerHeartbeat,
    m.postgresCpuUsPerHeartbeat,
  ];
  const batchedOverSingle = singleSummary ? round(portalSummary.rps / singleSummary.rps, 3) : null;
  const ratio = {
    throughput: round(portalSummary.rps / baselineSummary.rps, 3),
    p50: round(portalSummary.p50Ms / baselineSummary.p50Ms, 3),
    p99: round(portalSummary.p99Ms / baselineSummary.p99Ms, 3),
  };
  const targetsMet = {
    atLeast6000PerSecond: portalSummary.rps >= TARGET_HEARTBEATS_PER_SECOND,
    serverCpuAtMost100Us: portalSummary.serverCpuUsPerHeartbeat <= TARGET_SERVER_CPU_US,
    ratioAtLeast0_8: ratio.throughput >= 0.8,
    batchedAtLeast1_5xSingle: batchedOverSingle === null ? null : batchedOverSingle >= 1.5,
  };

  log('');
  log(
    `CPU is in % of one core (the machine has ${machine.cpus}); "other" is everything on the machine that is not the benchmark; µs/hb is CPU time per answered heartbeat.`,
  );
  log(table(rows));
  log('');
  log(
    table([
      ['median of runs', 'hb/s', 'p50 ms', 'p99 ms', 'server µs/hb', 'postgres µs/hb'],
      summaryRow('baseline (node:http + pg, same SQL)', baselineSummary),
      summaryRow('portal', portalSummary),
      ...(singleSummary
        ? [
            summaryRow('portal, single path (SVC_HEARTBEAT_BATCH_MAX=0)', singleSummary),
            ['portal (batched) / single path', String(batchedOverSingle), '', '', '', ''],
          ]
        : []),
      [
        'portal / baseline',
        ratio.throughput.toFixed(3),
        `${ratio.p50.toFixed(2)}x`,
        `${ratio.p99.toFixed(2)}x`,
        '',
        '',
      ],
      ...(whatIfPrepared
        ? [
            [
              'what-if: baseline, named prepared statement',
              Math.round(whatIfPrepared.rps),
              whatIfPrepared.latencyMs.p50.toFixed(2),
              whatIfPrepared.latencyMs.p99.toFixed(2),
              whatIfPrepared.cpuUsPerRequest['server'] ?? '-',
              whatIfPrepared.cpuUsPerRequest['postgres'] ?? '-',
            ],
          ]
        : []),
      ...pgbench.flatMap((r) =>
        'tps' in r
          ? [
              [
                `${r.variant}, ${r.clients} conn.`,
                Math.round(r.tps),
                r.latencyMs.p50.toFixed(2),
                r.latencyMs.p99.toFixed(2),
                '',
                r.postgresCpuUsPerTransaction ?? '-',
              ],
            ]
          : [],
      ),
    ]),
  );
  log('');
  const met = (ok: boolean | null): string => (ok ? 'met' : 'NOT met');
  log(
    `targets: ≥ 6,000 heartbeats/s: ${met(targetsMet.atLeast6000PerSecond)} (${Math.round(portalSummary.rps)}/s); portal CPU ≤ 100 µs per heartbeat: ${met(targetsMet.serverCpuAtMost100Us)} (${portalSummary.serverCpuUsPerHeartbeat} µs)`,
  );
  log(`earlier target: portal/baseline ≥ 0.8: ${met(targetsMet.ratioAtLeast0_8)} (${ratio.throughput.toFixed(3)})`);
  if (batchedOverSingle !== null)
    log(
      `earlier target: batched ≥ 1.5 × the single path: ${met(targetsMet.batchedAtLeast1_5xSingle)} (${batchedOverSingle.toFixed(3)})`,
    );
  const contended = runs.filter((r) => (r.cpuPercent['other'] ?? 0) > opts.quietBusyPercent);
  if (contended.length > 0)
    log(
      `warning: ${contended.length} of ${runs.length} runs shared the machine with other work (${contended.map((r) => `${r.title} other ${cpuCell(r.cpuPercent['other'])}`).join(', ')}); their figures are less reliable.`,
    );
  if (sqlCheck.identical === false) log(`warning: ${sqlCheck.note}`);

  let profile: unknown = null;
  if (opts.profile) {
    await portal.stop(); // the profile is written when the portal exits
    const files = fs.existsSync(profileDir) ? fs.readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile')) : [];
    for (const f of files) {
      const s = summarizeProfile(
        JSON.parse(fs.readFileSync(path.join(profileDir, f), 'utf8')) as Parameters<typeof summarizeProfile>[0],
      );
      const busy = s.totalMs - (s.byArea.find(([a]) => a === '(idle)')?.[1] ?? 0);
      const pct = (ms: number) => `${((ms / busy) * 100).toFixed(1)}%`;
      log(`\nportal CPU profile ${path.join(profileDir, f)}: ${(busy / 1000).toFixed(1)} s busy`);
      log('self time by area:');
      for (const [a, ms] of s.byArea.filter(([a]) => a !== '(idle)').slice(0, 15))
        log(`  ${pct(ms).padStart(6)}  ${a}`);
      log('inclusive time by function:');
      for (const [fn, ms] of s.byTotal
        .filter(([fn]) => !fn.startsWith('(idle)') && !fn.startsWith('(root)'))
        .slice(0, 30))
        log(`  ${pct(ms).padStart(6)}  ${fn}`);
      profile = {
        file: path.join(profileDir, f),
        busyMs: round(busy, 0),
        byArea: s.byArea.slice(0, 20),
        byTotal: s.byTotal.slice(0, 40),
        bySelf: s.bySelf.slice(0, 40),
      };
    }
  }

  const file = writeResult(
    'heartbeat',
    {
      benchmark: 'heartbeat',
      description: `POST ${PATH} for the agents of a seeded fleet in a shuffled order, against a bare node:http server running the same heartbeat SQL through pg (same database, same pool size), plus pgbench with that SQL`,
      startedAt: started.toISOString(),
      finishedAt: new Date().toISOString(),
      profiled: opts.profile,
      machine,
      postgres: postgresVersion,
      loadAverage: { atStart: loadAtStart, atEnd: os.loadavg().map((v) => round(v, 2)) },
      options: opts,
      fleet: {
        agents: opts.agents,
        pendingCommands: seeded.commands,
        agentsWithCommands: seeded.agentsWithCommands,
        tier: 'business',
      },
      checks: { sameAnswer: { agent: probeAgent, same: answers.same, commands: answers.commands }, sameSql: sqlCheck },
      summary: {
        baseline: baselineSummary,
        portal: portalSummary,
        singlePath: singleSummary,
        ratio,
        batchedOverSingle,
        targets: {
          heartbeatsPerSecond: TARGET_HEARTBEATS_PER_SECOND,
          serverCpuUsPerHeartbeat: TARGET_SERVER_CPU_US,
          ratio: 0.8,
          met: targetsMet,
        },
        whatIfPrepared,
        pgbench,
      },
      runs,
      profile,
    },
    started,
  );
  log(`result written to ${file}`);
}

const help = (): string =>
  [
    usage('bench/heartbeat.ts'),
    '  --agents=N            fleet size (default 100000)',
    '  --pending=N           pending commands (default 20000)',
    '  --pool=N              database pool of the portal and the baseline; pgbench connections (default 10)',
    '  --no-pgbench          skip the pgbench figures',
    '  --no-what-if          skip the what-if figures (prepared statement, asynchronous commit)',
    "  --no-single           skip the single-path portal (SVC_HEARTBEAT_BATCH_MAX=0), the batched path's baseline",
    '  (defaults here: --duration=15 --warmup=5 --rounds=2 --quiet-wait=30)',
  ].join('\n');

const main = () =>
  benchmarkMain({
    parse: () => parseOptions(process.argv.slice(2)),
    usage: help,
    run: benchmark,
    log,
    cleans: 'stopping the portal, PostgreSQL and the baseline; removing temp dirs',
  });

process.exitCode = await main();
