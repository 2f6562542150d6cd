/**
 * Soak: a fleet of agents heartbeating at once with license checks beside them, all from one
 * address, for minutes, on the real portal (its own process, embedded PostgreSQL, debug logging
 * by default, as an operator chasing a problem runs it). Reports what the portal sustained
 * (heartbeats/s and license checks/s), every failure, and its RSS over the run; then the same
 * mixed load against the bare baselines of the two routes in the same run: the heartbeat
 * statement through pg (bench/heartbeat/baseline.ts, same database) and the license answer's
 * bytes from node:http (bench/lib/baseline-server.ts).
 *
 *   node bench/soak.ts [--duration=180 --agents=1000 --pending=2000 --license-connections=50]
 *                      [--log-level=debug --pool=10 --no-baseline]
 *
 * One heartbeat in flight per agent (one connection each, the agents in the fleet order of
 * bench/heartbeat/load.ts). Results: bench/results/soak-<timestamp>.json; see bench/README.md.
 */
import os from 'node:os';
import pg from 'pg';
import { routeFromAnswer, startBaseline } from './lib/baseline.ts';
import { interrupted } from './lib/cleanup.ts';
import { type CpuTarget, waitForQuietMachine } from './lib/cpu.ts';
import { type LoadSummary, runLoad } from './lib/load.ts';
import { machineInfo } from './lib/machine.ts';
import { benchmarkMain } from './lib/main.ts';
import { OptionsError, wholeNumber } from './lib/options.ts';
import { adminToken, createLicense, startPortalProcess } from './lib/portal.ts';
import { table, writeResult } from './lib/report.ts';
import { round } from './lib/stats.ts';
import { startBaselineServer } from './heartbeat/baseline.ts';
import { CLIENT_ID, databaseUrlOf, resetBacklog, seed } from './heartbeat/fleet.ts';
import { type LoadResult, runHeartbeatLoad } from './heartbeat/load.ts';
import { readMem } from './upload/rss.ts';

/**
 * The soak reported from an earlier round (heartbeats/s and license checks/s). Its mix of
 * connections was not recorded, and in a closed loop the split between the two follows that mix:
 * the comparison is of all answers per second (bench/README.md, "Soak").
 */
const EARLIER = { heartbeats: 2493, licenses: 5005 };
const EARLIER_TOTAL = EARLIER.heartbeats + EARLIER.licenses;
const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'];

interface SoakOptions {
  durationS: number;
  agents: number;
  pending: number;
  licenseConnections: number;
  pool: number;
  logLevel: string;
  baseline: boolean;
  verbose: boolean;
  /** Read the portal's log through a pipe into this process (how the soak ran before it had a log file). */
  logToPipe: boolean;
}

function parseOptions(argv: string[]): SoakOptions | 'help' {
  const flags = new Map<string, string>();
  const opts = { baseline: true, verbose: false, logToPipe: false };
  for (const arg of argv) {
    if (arg === '--help' || arg === '-h') return 'help';
    if (arg === '--no-baseline') opts.baseline = false;
    else if (arg === '--verbose') opts.verbose = true;
    else if (arg === '--log-to-pipe') opts.logToPipe = true;
    else {
      const m = /^--([a-z-]+)=(.+)$/.exec(arg);
      if (!m) throw new OptionsError(`unknown option ${arg}`);
      flags.set(m[1] as string, m[2] as string);
    }
  }
  const logLevel = flags.get('log-level') ?? 'debug';
  if (!LEVELS.includes(logLevel)) throw new OptionsError(`--log-level must be one of ${LEVELS.join(', ')}`);
  const known = ['duration', 'agents', 'pending', 'license-connections', 'pool', 'log-level'];
  for (const name of flags.keys()) if (!known.includes(name)) throw new OptionsError(`unknown option --${name}`);
  return {
    ...opts,
    logLevel,
    durationS: wholeNumber('duration', flags.get('duration'), 180, 5, 3600),
    agents: wholeNumber('agents', flags.get('agents'), 1000, 1, 5000),
    pending: wholeNumber('pending', flags.get('pending'), 2000, 0, 1_000_000),
    licenseConnections: wholeNumber('license-connections', flags.get('license-connections'), 50, 1, 1000),
    pool: wholeNumber('pool', flags.get('pool'), 10, 1, 100),
  };
}

const help = (): string =>
  [
    'usage: node bench/soak.ts [flags]   (or: npm run bench:soak -- [flags])',
    '  --duration=N             seconds of each side (default 180)',
    '  --agents=N               agents, one connection and one heartbeat in flight each (default 1000)',
    '  --pending=N              pending commands in the backlog (default 2000)',
    '  --license-connections=N  connections checking the license beside them (default 50)',
    "  --log-level=L            the portal's SVC_LOG_LEVEL (default debug)",
    '  --pool=N                 database pool of the portal and the heartbeat baseline (default 10)',
    '  --no-baseline            skip the bare baselines',
    "  --log-to-pipe            read the portal's log through a pipe in this process, not from a file",
    "  --verbose                echo the servers' output",
  ].join('\n');

const log = (message: string): void => console.log(message);

interface RssTrace {
  startKiB: number;
  peakKiB: number;
  endKiB: number;
  /** RSS at each tenth of the run, KiB: flat at the end means no leak. */
  tenthsKiB: number[];
}

/** VmRSS of `pid` once a second until `done` settles. */
async function traceRss(pid: number, done: Promise<unknown>): Promise<RssTrace> {
  const samples: number[] = [];
  const sample = (): void => {
    const m = readMem(pid);
    if (m) samples.push(m.rssKiB);
  };
  sample();
  const timer = setInterval(sample, 1000);
  try {
    await done;
  } finally {
    clearInterval(timer);
  }
  sample();
  const perTenth = Math.max(1, Math.floor(samples.length / 10));
  return {
    startKiB: samples[0] ?? 0,
    peakKiB: Math.max(...samples),
    endKiB: samples.at(-1) ?? 0,
    tenthsKiB: Array.from({ length: Math.min(10, samples.length) }, (_, i) => samples[i * perTenth] ?? 0),
  };
}

/** Answers per second of the run, and the slowest answer of each second (by when it came back). */
class Timeline {
  readonly answers: number[] = [];
  readonly maxMs: number[] = [];
  readonly #start = Date.now();

  add(latencyMs: number): void {
    const second = Math.floor((Date.now() - this.#start) / 1000);
    this.answers[second] = (this.answers[second] ?? 0) + 1;
    this.maxMs[second] = Math.max(this.maxMs[second] ?? 0, latencyMs);
  }

  /** The seconds in which some answer had waited a second or more: [second, answers, slowest ms]. */
  stalls(): [number, number, number][] {
    const out: [number, number, number][] = [];
    this.maxMs.forEach((ms, second) => {
      if (ms >= 1000) out.push([second, this.answers[second] ?? 0, Math.round(ms)]);
    });
    return out;
  }
}

interface SideResult {
  side: string;
  heartbeats: LoadResult;
  licenses: LoadSummary;
  failures: number;
  rss: RssTrace | null;
  timeline: { heartbeats: number[]; licenses: number[]; stalls: { heartbeats: number[][]; licenses: number[][] } };
}

async function runSide(
  side: string,
  urls: { heartbeat: string; license: string },
  key: string,
  opts: SoakOptions,
  cpu: CpuTarget[],
  rssPid: number | null,
): Promise<SideResult> {
  const quiet = await waitForQuietMachine({ maxBusyPercent: 25, timeoutMs: 60_000, signal: interrupted });
  if (quiet.busyPercent !== null && quiet.busyPercent > 25)
    log(`  (the machine is busy: ${quiet.busyPercent}% of a core used by others; running ${side} anyway)`);
  const hbTimeline = new Timeline();
  const licenseTimeline = new Timeline();
  const both = Promise.all([
    runHeartbeatLoad({
      onResponse: (ms) => hbTimeline.add(ms),
      title: `${side} heartbeats`,
      url: urls.heartbeat,
      key,
      agents: opts.agents,
      connections: opts.agents,
      pipelining: 1,
      durationS: opts.durationS,
      maxRequests: 1e9,
      cpu,
    }),
    runLoad({
      title: `${side} license checks`,
      url: `${urls.license}/api/license`,
      headers: { 'x-api-key': key },
      connections: opts.licenseConnections,
      durationS: opts.durationS,
      maxRequests: 1e9,
      signal: interrupted,
      onResponse: (ms) => licenseTimeline.add(ms),
    }),
  ]);
  const rss = rssPid === null ? null : await traceRss(rssPid, both);
  const [heartbeats, licenses] = await both;
  const failures =
    heartbeats.non2xx + heartbeats.errors + heartbeats.timeouts + licenses.non2xx + licenses.errors + licenses.timeouts;
  log(
    `  ${side.padEnd(9)} ${heartbeats.rps.toFixed(0).padStart(6)} hb/s (p99 ${heartbeats.latencyMs.p99.toFixed(1)} ms)   ` +
      `${licenses.rps.toFixed(0).padStart(6)} license/s (p99 ${licenses.latencyMs.p99.toFixed(1)} ms)   failures ${failures}` +
      (rss
        ? `   RSS ${(rss.startKiB / 1024).toFixed(0)} -> ${(rss.endKiB / 1024).toFixed(0)} MiB (peak ${(rss.peakKiB / 1024).toFixed(0)})`
        : ''),
  );
  const stalls = { heartbeats: hbTimeline.stalls(), licenses: licenseTimeline.stalls() };
  for (const [what, list] of Object.entries(stalls))
    if (list.length > 0)
      log(
        `    ${what}: an answer of a second or more in ${list.length} second(s): ${list
          .slice(0, 8)
          .map(([s, n, ms]) => `${s} s (${n} answers, slowest ${ms} ms)`)
          .join(', ')}`,
      );
  const timeline = { heartbeats: hbTimeline.answers, licenses: licenseTimeline.answers, stalls };
  return { side, heartbeats, licenses, failures, rss, timeline };
}

async function soak(opts: SoakOptions): Promise<void> {
  const started = new Date();
  const machine = machineInfo();
  const loadAtStart = os.loadavg().map((v) => round(v, 2));
  log(
    `soak: ${opts.agents} agents heartbeating (one connection each) and ${opts.licenseConnections} connections checking the license, ` +
      `one address, ${opts.durationS} s per side, portal at ${opts.logLevel}`,
  );
  log(
    `machine: ${machine.cpus} CPUs (${machine.cpuModel}), Node ${machine.node}, load average ${loadAtStart.join(' ')}`,
  );
  const connections = opts.agents + opts.licenseConnections + 10;
  const portal = await startPortalProcess({
    echo: opts.verbose,
    logLevel: opts.logLevel,
    // As journald or a log file takes it: read by this process, the log would slow the load generator.
    logToFile: !opts.verbose && !opts.logToPipe,
    // Every connection comes from one address (loopback): both caps must hold the whole fleet.
    env: {
      SVC_DB_POOL_MAX: String(opts.pool),
      SVC_MAX_CONNECTIONS: String(connections),
      SVC_MAX_CONNECTIONS_PER_ADDRESS: String(connections),
    },
  });
  const token = await adminToken(portal);
  const key = await createLicense(portal, token, { tier: 'business', client_id: CLIENT_ID, name: 'soak' });
  const databaseUrl = databaseUrlOf(portal);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const results: SideResult[] = [];
  try {
    const license = (await db.query<{ id: string }>('SELECT id FROM licenses WHERE client_id = $1', [CLIENT_ID]))
      .rows[0];
    if (!license) throw new Error('the soak license is not in the database');
    await seed(db, { agents: opts.agents, pending: opts.pending }, license.id);
    const postgres: CpuTarget = { name: 'postgres', pid: () => portal.postmasterPid(), withChildren: true };
    results.push(
      await runSide(
        'portal',
        { heartbeat: portal.url, license: portal.url },
        key,
        opts,
        [{ name: 'server', pid: () => portal.child.pid }, postgres],
        portal.child.pid ?? null,
      ),
    );
    if (opts.baseline) {
      await resetBacklog(db);
      const captured = await fetch(`${portal.url}/api/license`, { headers: { 'x-api-key': key } });
      const body = Buffer.from(await captured.arrayBuffer());
      const licenseBaseline = await startBaseline([
        routeFromAnswer('GET', '/api/license', { status: captured.status, headers: captured.headers, body }),
      ]);
      const hbBaseline = await startBaselineServer(
        { databaseUrl, poolMax: opts.pool, tier: 'business', clientId: CLIENT_ID, prepared: true },
        opts.verbose,
      );
      results.push(
        await runSide(
          'baseline',
          { heartbeat: hbBaseline.url, license: licenseBaseline.url },
          key,
          opts,
          [{ name: 'server', pid: () => hbBaseline.child.pid }, postgres],
          null,
        ),
      );
    }
  } finally {
    await db.end();
  }
  const [mine, bare] = results as [SideResult, SideResult | undefined];
  const ratio = (a: number, b: number | undefined): string => (b ? (a / b).toFixed(3) : '-');
  log('');
  log(
    table([
      ['', 'hb/s', 'license/s', 'failures', 'hb p99 ms', 'license p99 ms'],
      ...results.map((r) => [
        r.side,
        Math.round(r.heartbeats.rps),
        Math.round(r.licenses.rps),
        r.failures,
        r.heartbeats.latencyMs.p99.toFixed(1),
        r.licenses.latencyMs.p99.toFixed(1),
      ]),
      [
        'portal / baseline',
        ratio(mine.heartbeats.rps, bare?.heartbeats.rps),
        ratio(mine.licenses.rps, bare?.licenses.rps),
        '',
        '',
        '',
      ],
      ['earlier soak', EARLIER.heartbeats, EARLIER.licenses, 0, '', ''],
    ]),
  );
  const total = mine.heartbeats.rps + mine.licenses.rps;
  const above = total > EARLIER_TOTAL;
  log(
    `target: more answers per second than the earlier soak (${EARLIER_TOTAL}: ${EARLIER.heartbeats} hb/s + ${EARLIER.licenses} license/s), with 0 failures: ${above && mine.failures === 0 ? 'met' : 'NOT met'} (${Math.round(total)}/s, ${mine.failures} failures)`,
  );
  if (mine.rss)
    log(`portal RSS by tenths of the run, MiB: ${mine.rss.tenthsKiB.map((k) => (k / 1024).toFixed(0)).join(' ')}`);
  const file = writeResult(
    'soak',
    {
      benchmark: 'soak',
      startedAt: started.toISOString(),
      finishedAt: new Date().toISOString(),
      machine,
      loadAverage: { atStart: loadAtStart, atEnd: os.loadavg().map((v) => round(v, 2)) },
      options: opts,
      earlier: EARLIER,
      met: above && mine.failures === 0,
      sides: results,
    },
    started,
  );
  log(`result written to ${file}`);
}

process.exitCode = await benchmarkMain({
  parse: () => parseOptions(process.argv.slice(2)),
  usage: help,
  run: soak,
  log,
  cleans: 'stopping the portal, PostgreSQL and the baselines; removing temp dirs',
});
