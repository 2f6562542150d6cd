/**
 * Benchmark: queue one command for a group of 10,000 agents.
 *
 * - portal: POST /api/agent-commands {command_type: 'restart', group_target} on the real
 *   portal process (admin JWT, one transaction: member check, the INSERT ... SELECT,
 *   the command_dispatched audit row; a 201 listing the 10,000 commands), timed from
 *   the request until the whole answer has arrived.
 * - baseline: the portal's very INSERT ... SELECT (same text, the portal's values as
 *   literals, RETURNING the same columns) run once by the system `psql` against the same
 *   database, timed by psql's own `\timing` (statement round trip, no process start or
 *   connection set-up). Without a `psql` on PATH the statement goes through one `pg`
 *   client query instead, and the result says so.
 *
 * Repetitions alternate (portal first in odd ones, baseline first in even ones); every
 * repetition starts from an empty command table (DELETE, VACUUM, CHECKPOINT). Medians and
 * the ratio baseline/portal (1 = as fast as the bare statement; target ≥ 0.8) are printed
 * and written to bench/results/group-command-<timestamp>.json. A last, separate portal
 * request runs with PostgreSQL's statement log on, to show how its time splits between
 * the database and the portal process.
 *
 *   node bench/group-command.ts [--agents=10000] [--reps=7] [--warmup-reps=1] [--verbose] [--profile]
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs, promisify } from 'node:util';
import pg from 'pg';
import { runTool } from './lib/children.ts';
import { interrupted, onCleanup } from './lib/cleanup.ts';
import { startCpuSample, waitForQuietMachine } from './lib/cpu.ts';
import { machineInfo } from './lib/machine.ts';
import { adminToken, createLicense, startPortalProcess, type PortalProcess } from './lib/portal.ts';
import { summarizeProfile } from './lib/profile-summary.ts';
import { RESULTS_DIR, stampOf, table, writeResult } from './lib/report.ts';
import { median, round } from './lib/stats.ts';
import { benchmarkMain } from './lib/main.ts';

const run = promisify(execFile);
const GROUP = 'bench-group-10k';
const CLIENT_ID = 'bench-group';

interface Options {
  agents: number;
  reps: number;
  warmupReps: number;
  quietWaitS: number;
  verbose: boolean;
  profile: boolean;
}

function parseOptions(argv: string[]): Options | 'help' {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      agents: { type: 'string' },
      reps: { type: 'string' },
      'warmup-reps': { type: 'string' },
      'quiet-wait': { type: 'string' },
      verbose: { type: 'boolean' },
      profile: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  const num = (raw: string | undefined, fallback: number, min: number, max: number, name: string): number => {
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new Error(`--${name} must be a whole number between ${min} and ${max} (got "${raw}")`);
    return n;
  };
  return {
    agents: num(values.agents, 10_000, 1, 1_000_000, 'agents'),
    reps: num(values.reps, 7, 1, 100, 'reps'),
    warmupReps: num(values['warmup-reps'], 1, 0, 20, 'warmup-reps'),
    quietWaitS: num(values['quiet-wait'], 20, 0, 600, 'quiet-wait'),
    verbose: values.verbose ?? false,
    profile: values.profile ?? false,
  };
}

const USAGE = `usage: node bench/group-command.ts [flags]
  --agents=N        group size (default 10000)
  --reps=N          measured repetitions per side (default 7)
  --warmup-reps=N   unmeasured repetitions per side first (default 1)
  --quiet-wait=S    before each repetition, wait up to S s for an idle machine (default 20, 0 = off)
  --verbose         echo the portal's output
  --profile         CPU-profile the portal (node --cpu-prof; slower, for analysis only)`;

function log(message: string): void {
  console.log(message);
}

function databaseUrlOf(portal: PortalProcess): string {
  const { password } = JSON.parse(fs.readFileSync(path.join(portal.dataDir, 'postgres-credentials.json'), 'utf8')) as {
    password: string;
  };
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${portal.pgPort}/svc`;
}

const quote = (s: string): string => `'${s.replace(/'/g, "''")}'`;

/**
 * The INSERT ... SELECT at the core of the portal's group broadcast (insertGroupCommands in
 * agents/queries.ts), with the values it binds as literals: same tables, same join and filter,
 * same order, same RETURNING.
 */
function insertSelect(createdBy: string, createdAt: Date): string {
  return `INSERT INTO agent_commands (client_id, agent_id, command_type, payload, priority, created_by, group_target, created_at)
        SELECT g.client_id, g.agent_id, 'restart', '{}'::jsonb, 5, ${quote(createdBy)}, ${quote(GROUP)}, ${quote(createdAt.toISOString())}::timestamptz
        FROM agent_groups g JOIN agents a ON a.client_id = g.client_id AND a.agent_id = g.agent_id
        WHERE g.group_name = ${quote(GROUP)} AND a.deregistered_at IS NULL AND a.key_tier IN ('business', 'msp')
        ORDER BY g.agent_id
        RETURNING id, agent_id, created_at`;
}

async function resetCommands(db: pg.Client): Promise<void> {
  await db.query('DELETE FROM agent_commands');
  await db.query('VACUUM (ANALYZE) agent_commands');
  await db.query('CHECKPOINT');
}

async function countCommands(db: pg.Client): Promise<number> {
  return (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM agent_commands')).rows[0]?.n ?? 0;
}

interface PortalRep {
  ms: number;
  status: number;
  commands: number;
  bytes: number;
  cpuPercent: Record<string, number | null>;
}

async function portalRep(portal: PortalProcess, token: string): Promise<PortalRep> {
  const cpu = startCpuSample([
    { name: 'portal', pid: () => portal.child.pid },
    { name: 'postgres', pid: () => portal.postmasterPid(), withChildren: true },
  ]);
  const t0 = performance.now();
  const res = await fetch(`${portal.url}/api/agent-commands`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-identity-token': token },
    body: JSON.stringify({ command_type: 'restart', group_target: GROUP, priority: 5 }),
    signal: AbortSignal.timeout(120_000),
  });
  const body = Buffer.from(await res.arrayBuffer());
  const ms = performance.now() - t0;
  const cpuPercent = cpu.stop();
  if (res.status !== 201)
    throw new Error(`POST /api/agent-commands: HTTP ${res.status} ${body.toString('utf8').slice(0, 300)}`);
  const parsed = JSON.parse(body.toString('utf8')) as { commands?: unknown[] };
  return {
    ms: round(ms, 2),
    status: res.status,
    commands: parsed.commands?.length ?? -1,
    bytes: body.length,
    cpuPercent,
  };
}

interface BaselineRep {
  /** The statement's round trip as the client timed it. */
  ms: number;
  /** psql only: the whole process, start to exit (start-up, connection, statement, exit). */
  processMs: number | null;
  rows: number;
}

interface Baseline {
  tool: string;
  rep(sql: string): Promise<BaselineRep>;
}

async function psqlBaseline(databaseUrl: string, db: pg.Client): Promise<Baseline | null> {
  let version: string;
  try {
    version = (await run('psql', ['--version'])).stdout.trim();
  } catch {
    return null;
  }
  const url = new URL(databaseUrl);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'] ?? '',
    PGPASSWORD: decodeURIComponent(url.password),
    LC_ALL: 'C',
  };
  const conn = [
    '-h',
    url.hostname,
    '-p',
    url.port,
    '-U',
    decodeURIComponent(url.username),
    '-d',
    url.pathname.slice(1),
  ];
  return {
    tool: `${version} (system psql, \\timing)`,
    async rep(sql) {
      const before = await countCommands(db);
      const t0 = performance.now();
      const { code, out } = await runTool(
        'psql',
        [...conn, '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-o', '/dev/null', '-c', '\\timing on', '-c', sql],
        { env },
      );
      const processMs = performance.now() - t0;
      const m = /Time: ([\d.]+) ms/.exec(out);
      if (code !== 0 || !m) throw new Error(`psql exited with ${code}: ${out.slice(0, 500)}`);
      return { ms: round(Number(m[1]), 2), processMs: round(processMs, 2), rows: (await countCommands(db)) - before };
    },
  };
}

function pgBaseline(databaseUrl: string): Baseline {
  return {
    tool: 'one pg client query (no psql on PATH)',
    async rep(sql) {
      const client = new pg.Client({ connectionString: databaseUrl, application_name: 'bench-baseline' });
      await client.connect();
      try {
        const t0 = performance.now();
        const res = await client.query(sql);
        return { ms: round(performance.now() - t0, 2), processMs: null, rows: res.rowCount ?? 0 };
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * One more portal request with the statement log on: each statement's server-side time
 * (parse, bind, execute) from PostgreSQL's own log, against the request's wall time.
 */
async function dbTimeOfOneRequest(
  db: pg.Client,
  portal: PortalProcess,
  token: string,
): Promise<{ wallMs: number; statements: { ms: number; sql: string }[]; dbMs: number } | { skipped: string }> {
  const logFile = path.join(portal.dataDir, 'postgres-log', 'postgresql.log');
  try {
    fs.accessSync(logFile, fs.constants.R_OK);
  } catch {
    return { skipped: `cannot read ${logFile}` };
  }
  await resetCommands(db);
  await db.query('ALTER SYSTEM SET log_min_duration_statement = 0');
  await db.query('SELECT pg_reload_conf()');
  await sleep(300);
  try {
    const offset = fs.statSync(logFile).size;
    const rep = await portalRep(portal, token);
    await sleep(300);
    const text = fs.readFileSync(logFile, 'utf8').slice(offset);
    const statements: { ms: number; sql: string }[] = [];
    for (const entry of text.split(/\n(?=\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})/)) {
      const m = /duration: ([\d.]+) ms\s+(?:(parse|bind|execute) [^:]*|statement): ([\s\S]*)$/.exec(entry);
      if (!m) continue;
      const sqlText = (m[3] ?? '').replace(/\s+/g, ' ').trim();
      // Our own control connection's statements are not the portal's.
      if (/pg_reload_conf|ALTER SYSTEM|count\(\*\)::int AS n FROM agent_commands/.test(sqlText)) continue;
      statements.push({ ms: Number(m[1]), sql: `${m[2] ?? 'simple'}: ${sqlText.slice(0, 110)}` });
    }
    return {
      wallMs: rep.ms,
      statements,
      dbMs: round(
        statements.reduce((a, s) => a + s.ms, 0),
        2,
      ),
    };
  } finally {
    await db.query('ALTER SYSTEM RESET log_min_duration_statement');
    await db.query('SELECT pg_reload_conf()');
  }
}

async function benchmark(opts: Options): Promise<void> {
  const started = new Date();
  const machine = machineInfo();
  const loadAtStart = os.loadavg().map((v) => round(v, 2));
  log(
    `group command benchmark: one 'restart' for a group of ${opts.agents.toLocaleString('en')} agents; ${opts.reps} measured repetition(s) per side after ${opts.warmupReps} warm-up`,
  );
  log(
    `machine: ${machine.cpus} CPUs (${machine.cpuModel}), ${machine.memoryGiB} GiB, Node ${machine.node}, ${machine.platform}, load average ${loadAtStart.join(' ')}`,
  );

  const profileDir = path.join(RESULTS_DIR, `group-command-${stampOf(started)}-profile`);
  if (opts.profile)
    log(`profiling the portal into ${profileDir}: its figures are slowed by the profiler, do not report them`);
  const portal = await startPortalProcess({
    echo: opts.verbose,
    nodeArgs: opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
  });
  log(`portal up at ${portal.url} (pid ${portal.child.pid}, PostgreSQL on port ${portal.pgPort})`);
  const token = await adminToken(portal);
  await createLicense(portal, token, { tier: 'msp', client_id: CLIENT_ID, name: 'group command bench' });
  const databaseUrl = databaseUrlOf(portal);
  const db = new pg.Client({ connectionString: databaseUrl, application_name: 'bench-control' });
  // Stopping the portal stops its PostgreSQL under this connection: that must not crash the benchmark.
  db.on('error', () => undefined);
  await db.connect();
  onCleanup('close the control connection', () => db.end().catch(() => undefined));
  const postgresVersion = (await db.query<{ version: string }>('SELECT version()')).rows[0]?.version ?? null;
  const license = (await db.query<{ id: string }>('SELECT id FROM licenses WHERE client_id = $1', [CLIENT_ID])).rows[0];
  if (!license) throw new Error('the bench license is not in the database');

  // The fleet and the group, straight in SQL (registering 10,000 agents over HTTP is not what is measured).
  await db.query(
    `INSERT INTO agents (agent_id, client_id, license_id, key_tier, version, sent_at, status, uptime_seconds, received_at, first_seen_at)
     SELECT 'svcd_' || lpad(to_hex(n), 8, '0'), $1, $2, 'msp', '4.2.3', now(), 'running', 0, now(), now() FROM generate_series(1, $3::int) AS n`,
    [CLIENT_ID, license.id, opts.agents],
  );
  await db.query(
    `INSERT INTO agent_groups (client_id, group_name, agent_id) SELECT client_id, $1, agent_id FROM agents WHERE client_id = $2`,
    [GROUP, CLIENT_ID],
  );
  await db.query('VACUUM (ANALYZE) agents, agent_groups, agent_commands');
  log(`seeded ${opts.agents.toLocaleString('en')} agents (msp) in group ${GROUP}`);

  const baseline = (await psqlBaseline(databaseUrl, db)) ?? pgBaseline(databaseUrl);
  log(`baseline: ${baseline.tool}`);

  // The portal's values: created_by is the admin's actor string, read back from its first command.
  await resetCommands(db);
  const first = await portalRep(portal, token);
  if (first.commands !== opts.agents)
    throw new Error(`the portal queued ${first.commands} commands, expected ${opts.agents}`);
  const createdBy = (await db.query<{ created_by: string }>('SELECT created_by FROM agent_commands LIMIT 1')).rows[0]
    ?.created_by;
  if (createdBy === undefined) throw new Error('no command rows after the first portal request');
  const sampleSql = insertSelect(createdBy, new Date());
  log(`baseline statement:\n  ${sampleSql.replace(/\s+/g, ' ')}`);

  const portalReps: (PortalRep & { rep: number })[] = [];
  const baselineReps: (BaselineRep & { rep: number })[] = [];
  const rows: (string | number)[][] = [
    ['rep', 'portal ms', 'baseline ms', 'psql process ms', 'portal CPU', 'postgres CPU (portal rep)'],
  ];
  const total = opts.warmupReps + opts.reps;
  for (let i = 1; i <= total; i++) {
    const measured = i > opts.warmupReps;
    if (measured && opts.quietWaitS > 0) {
      const quiet = await waitForQuietMachine({
        maxBusyPercent: 25,
        timeoutMs: opts.quietWaitS * 1000,
        signal: interrupted,
      });
      if (quiet.busyPercent !== null && quiet.busyPercent > 25)
        log(`  (the machine is still busy: ${quiet.busyPercent}% of a core used by others)`);
    }
    let p: PortalRep | null = null;
    let b: BaselineRep | null = null;
    const doPortal = async () => {
      await resetCommands(db);
      p = await portalRep(portal, token);
      if (p.commands !== opts.agents || (await countCommands(db)) !== opts.agents)
        throw new Error(`portal rep ${i}: ${p.commands} commands answered`);
    };
    const doBaseline = async () => {
      await resetCommands(db);
      b = await baseline.rep(insertSelect(createdBy, new Date()));
      if (b.rows !== opts.agents) throw new Error(`baseline rep ${i}: ${b.rows} rows inserted`);
    };
    if (i % 2 === 1) {
      await doPortal();
      await doBaseline();
    } else {
      await doBaseline();
      await doPortal();
    }
    const pr = p as PortalRep | null;
    const br = b as BaselineRep | null;
    if (!pr || !br) throw new Error('a repetition did not run');
    const label = measured ? `#${i - opts.warmupReps}` : `warm-up ${i}`;
    log(
      `  ${label.padEnd(10)} portal ${pr.ms.toFixed(1).padStart(8)} ms   baseline ${br.ms.toFixed(1).padStart(8)} ms${br.processMs !== null ? `   (psql process ${br.processMs.toFixed(1)} ms)` : ''}`,
    );
    if (!measured) continue;
    portalReps.push({ ...pr, rep: i - opts.warmupReps });
    baselineReps.push({ ...br, rep: i - opts.warmupReps });
    rows.push([
      label,
      pr.ms.toFixed(1),
      br.ms.toFixed(1),
      br.processMs === null ? '-' : br.processMs.toFixed(1),
      `${pr.cpuPercent['portal'] ?? '-'}%`,
      `${pr.cpuPercent['postgres'] ?? '-'}%`,
    ]);
  }

  const breakdown = await dbTimeOfOneRequest(db, portal, token);
  await resetCommands(db);

  const portalMs = round(median(portalReps.map((r) => r.ms)), 2);
  const baselineMs = round(median(baselineReps.map((r) => r.ms)), 2);
  const psqlProcessMs = baselineReps.every((r) => r.processMs !== null)
    ? round(median(baselineReps.map((r) => r.processMs as number)), 2)
    : null;
  const ratio = round(baselineMs / portalMs, 3);

  log('');
  log(table(rows));
  log('');
  log(
    table([
      ['median', 'ms', 'commands/s'],
      [
        `portal POST /api/agent-commands (${opts.agents} members)`,
        portalMs.toFixed(1),
        Math.round((opts.agents / portalMs) * 1000),
      ],
      [
        `baseline INSERT ... SELECT (${baseline.tool.startsWith('psql') ? 'psql' : 'pg'})`,
        baselineMs.toFixed(1),
        Math.round((opts.agents / baselineMs) * 1000),
      ],
      ...(psqlProcessMs !== null ? [['  psql process, start to exit', psqlProcessMs.toFixed(1), '']] : []),
      ['baseline / portal', ratio.toFixed(3), ''],
    ]),
  );
  log(`target baseline/portal ≥ 0.8: ${ratio >= 0.8 ? 'met' : 'NOT met'} (${ratio.toFixed(3)})`);
  if ('statements' in breakdown) {
    log(
      `\none more portal request with PostgreSQL's statement log on: ${breakdown.wallMs.toFixed(1)} ms wall, ${breakdown.dbMs.toFixed(1)} ms inside PostgreSQL:`,
    );
    for (const s of breakdown.statements) log(`  ${s.ms.toFixed(2).padStart(9)} ms  ${s.sql}`);
  }

  let profile: unknown = null;
  if (opts.profile) {
    await portal.stop();
    const files = fs.existsSync(profileDir) ? fs.readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile')) : [];
    for (const f of files) {
      const s = summarizeProfile(
        JSON.parse(fs.readFileSync(path.join(profileDir, f), 'utf8')) as Parameters<typeof summarizeProfile>[0],
      );
      const busy = s.totalMs - (s.byArea.find(([a]) => a === '(idle)')?.[1] ?? 0);
      log(
        `\nportal CPU profile ${path.join(profileDir, f)}: ${(busy / 1000).toFixed(1)} s busy; inclusive time by function:`,
      );
      for (const [fn, ms] of s.byTotal
        .filter(([fn]) => !fn.startsWith('(idle)') && !fn.startsWith('(root)'))
        .slice(0, 30))
        log(`  ${((ms / busy) * 100).toFixed(1).padStart(5)}%  ${fn}`);
      profile = {
        file: path.join(profileDir, f),
        busyMs: round(busy, 0),
        byArea: s.byArea.slice(0, 20),
        byTotal: s.byTotal.slice(0, 40),
      };
    }
  }

  const file = writeResult(
    'group-command',
    {
      benchmark: 'group-command',
      description: `POST /api/agent-commands {command_type: restart, group_target} for a group of ${opts.agents} agents vs the same INSERT ... SELECT from ${baseline.tool}`,
      startedAt: started.toISOString(),
      finishedAt: new Date().toISOString(),
      profiled: opts.profile,
      machine,
      postgres: postgresVersion,
      loadAverage: { atStart: loadAtStart, atEnd: os.loadavg().map((v) => round(v, 2)) },
      options: opts,
      baselineTool: baseline.tool,
      baselineStatement: sampleSql,
      summary: {
        portalMs,
        baselineMs,
        psqlProcessMs,
        ratio,
        target: 0.8,
        met: ratio >= 0.8,
        responseBytes: portalReps[0]?.bytes ?? null,
      },
      portalReps,
      baselineReps,
      dbBreakdown: breakdown,
      profile,
    },
    started,
  );
  log(`result written to ${file}`);
}

const main = () =>
  benchmarkMain({
    parse: () => parseOptions(process.argv.slice(2)),
    usage: () => USAGE,
    run: benchmark,
    log,
    cleans: 'stopping the portal and PostgreSQL; removing the temp dir',
  });

process.exitCode = await main();
