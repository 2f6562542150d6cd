/**
 * Benchmark: a bulk change of 1,000 findings of record (POST /api/findings/bulk, target
 * under 1 s), on a client whose target holds several sessions.
 *
 * One real portal (its own process, embedded PostgreSQL in a temp dir, log level warn). A
 * business key of one client uploads --sessions (5) sessions of --findings (10,000) findings
 * through the real POST /api/upload, in scan order, one target; consecutive sessions share all
 * but --shift (500) findings, so records, findings index and triage counts are built by the
 * portal itself. --bulk (1,000) fingerprints that every session holds are chosen at random.
 *
 * Repetitions run one at a time and take turns between two kinds of change, so each changes all the
 * records (and every session holding them is counted again):
 * - portal: POST /api/findings/bulk as the admin with {fingerprints, client_id, change}; the
 *   change is `{status, note}` (in_progress and deferred in turn), then
 *   `{exception: {reason, expiry}}` (a later expiry each time), and so on;
 * - baseline, right after, on a connection of its own: one plain
 *   `UPDATE finding_records SET <the same columns to the same values> WHERE client_id AND target
 *   AND fingerprint = ANY($3)` through pg: the least work "change these 1,000 records" takes.
 * Then one more portal request with PostgreSQL's statement log on, to see where its time goes.
 *
 *   node bench/records-bulk.ts [--sessions=5 --findings=10000 --shift=500 --bulk=1000 --reps=10 --warmup-reps=2 --quiet-wait=20]
 *
 * Results: bench/results/records-bulk-<timestamp>.json. See bench/README.md.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { largeSessionDoc, uploadDoc } from '@svc/test-support/large-session';
import { interrupted } from './lib/cleanup.ts';
import { startCpuSample, waitForQuietMachine } from './lib/cpu.ts';
import { machineInfo } from './lib/machine.ts';
import { controlConnection, databaseUrlOf, oneLine, withStatementLog } from './lib/pg-log.ts';
import { adminToken, createLicense, startPortalProcess, type PortalProcess } from './lib/portal.ts';
import { table, writeResult } from './lib/report.ts';
import { median, round } from './lib/stats.ts';
import {
  BUDGET_MS,
  baselineStatement,
  type Change,
  CLIENT_ID,
  changeOf,
  type Options,
  parseOptions,
  sessionDoc,
  TARGET,
  USAGE,
} from './records-bulk/plan.ts';
import { benchmarkMain } from './lib/main.ts';

function log(message: string): void {
  console.log(message);
}

interface PortalRep {
  ms: number;
  matched: number;
  changed: number;
  cpuPercent: Record<string, number | null>;
  /** CPU time of the portal process and its PostgreSQL during the request: what a shared machine does not inflate. */
  cpuMs: number | null;
}

async function portalRep(
  portal: PortalProcess,
  token: string,
  fingerprints: string[],
  change: Change,
): Promise<PortalRep> {
  const body = JSON.stringify({ fingerprints, client_id: CLIENT_ID, change });
  const cpu = startCpuSample([
    { name: 'portal', pid: () => portal.child.pid },
    { name: 'postgres', pid: () => portal.postmasterPid(), withChildren: true },
  ]);
  const t0 = performance.now();
  const res = await fetch(`${portal.url}/api/findings/bulk`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-identity-token': token },
    body,
    signal: AbortSignal.timeout(120_000),
  });
  const text = await res.text();
  const ms = performance.now() - t0;
  const cpuPercent = cpu.stop();
  if (res.status !== 200) throw new Error(`POST /api/findings/bulk: HTTP ${res.status} ${text.slice(0, 300)}`);
  const answer = JSON.parse(text) as { matched: number; changed: number; unmatched: string[] };
  const { portal: p, postgres: pg } = cpuPercent;
  const cpuMs =
    p === null || p === undefined || pg === null || pg === undefined ? null : round(((p + pg) / 100) * ms, 1);
  return { ms: round(ms, 2), matched: answer.matched, changed: answer.changed, cpuPercent, cpuMs };
}

async function baselineRep(
  db: pg.Client,
  fingerprints: string[],
  change: Change,
): Promise<{ ms: number; rows: number }> {
  const { text, values } = baselineStatement(change);
  const t0 = performance.now();
  const res = await db.query(text, [CLIENT_ID, TARGET, fingerprints, ...values]);
  return { ms: round(performance.now() - t0, 2), rows: res.rowCount ?? 0 };
}

/** Every session holding the changed findings counts them in the new state (the portal counted again). */
async function checkCounts(db: pg.Client, o: Options, change: Change): Promise<void> {
  const { rows } = await db.query<{ n: number }>(
    'status' in change
      ? 'SELECT COALESCE(sum(n), 0)::int AS n FROM session_triage_counts WHERE client_id = $1 AND status = $2'
      : 'SELECT COALESCE(sum(n), 0)::int AS n FROM session_triage_counts WHERE client_id = $1 AND exception_expiry = $2',
    [CLIENT_ID, 'status' in change ? change.status : change.exception.expiry],
  );
  const expected = o.bulk * o.sessions;
  if (rows[0]?.n !== expected)
    throw new Error(`the sessions' triage counts hold ${rows[0]?.n} findings in the new state, expected ${expected}`);
}

async function benchmark(o: Options): Promise<void> {
  const started = new Date();
  const machine = machineInfo();
  const loadAtStart = os.loadavg().map((v) => round(v, 2));
  log(
    `bulk change benchmark: ${o.bulk} findings of one client's target of ${o.sessions} sessions × ${o.findings} findings; ${o.reps} measured repetitions per side after ${o.warmupReps} warm-up`,
  );
  log(`machine: ${machine.cpus} CPUs, Node ${machine.node}, load average ${loadAtStart.join(' ')}`);
  // The socket's idle timeout (SVC_BODY_IDLE_TIMEOUT_SECONDS, 30 s) also runs while the portal merges an
  // upload whose body has arrived: on this shared machine a 10,000-finding upload can take longer, and
  // its connection is then closed without an answer (bench/README.md). Raised so the set-up completes.
  const portal = await startPortalProcess({ echo: o.verbose, env: { SVC_BODY_IDLE_TIMEOUT_SECONDS: '900' } });
  log(`portal up at ${portal.url} (pid ${portal.child.pid}, PostgreSQL on port ${portal.pgPort})`);
  const token = await adminToken(portal);
  const key = await createLicense(portal, token, { tier: 'business', client_id: CLIENT_ID, name: 'bulk change bench' });
  const databaseUrl = databaseUrlOf(portal);
  const control = await controlConnection(databaseUrl, 'bench-control');
  const baselineDb = await controlConnection(databaseUrl, 'bench-baseline');

  // The sessions, through the real upload, oldest scan first.
  const base = largeSessionDoc('base', CLIENT_ID, o.findings + (o.sessions - 1) * o.shift);
  const firstScan = new Date(Date.now() - (o.sessions + 1) * 3_600_000);
  const uploads: { session_id: string; ms: number; mb: number }[] = [];
  for (let k = 0; k < o.sessions; k++) {
    interrupted.throwIfAborted();
    const doc = sessionDoc(base, o, k, firstScan);
    const t0 = performance.now();
    const id = await uploadDoc(portal.url, key, doc);
    const ms = performance.now() - t0;
    uploads.push({ session_id: id, ms: round(ms, 0), mb: round(Buffer.byteLength(JSON.stringify(doc)) / 1e6, 1) });
    log(`  uploaded session ${id} (${o.findings} findings, ${uploads.at(-1)?.mb} MB) in ${(ms / 1000).toFixed(1)} s`);
  }
  const stored = (
    await control.query<{ records: number; sessions: number; counts: number }>(
      `SELECT (SELECT count(*)::int FROM finding_records WHERE client_id = $1) AS records,
              (SELECT count(*)::int FROM session_findings_state WHERE client_id = $1) AS sessions,
              (SELECT count(*)::int FROM session_triage_counts WHERE client_id = $1) AS counts`,
      [CLIENT_ID],
    )
  ).rows[0];
  log(`records: ${stored?.records}; indexed sessions: ${stored?.sessions}; triage count rows: ${stored?.counts}`);
  if (stored?.sessions !== o.sessions) throw new Error('not every session was indexed at upload');
  // What autovacuum does soon after bulk writes: the planner's statistics and the visibility map.
  await control.query('VACUUM (ANALYZE) finding_records, session_findings, session_triage_counts, finding_history');

  const fingerprints = (
    await control.query<{ fingerprint: string }>(
      `SELECT fingerprint FROM finding_records WHERE client_id = $1 AND target = $2 AND seen_count = $3
       ORDER BY md5(fingerprint) LIMIT $4`,
      [CLIENT_ID, TARGET, o.sessions, o.bulk],
    )
  ).rows.map((r) => r.fingerprint);
  const held = (
    await control.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM session_findings WHERE client_id = $1 AND fingerprint = ANY($2::text[]) AND in_scan',
      [CLIENT_ID, fingerprints],
    )
  ).rows[0]?.n;
  if (fingerprints.length !== o.bulk || held !== o.bulk * o.sessions)
    throw new Error(`expected ${o.bulk} findings held by every session, found ${fingerprints.length} (${held} rows)`);
  log(`changing ${o.bulk} findings, each held by all ${o.sessions} sessions (${held} session rows to count again)`);

  const today = new Date(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`);
  const rows: (string | number)[][] = [
    ['rep', 'change', 'portal ms', 'baseline ms', 'portal CPU', 'postgres CPU', 'portal+PG CPU ms', 'others CPU'],
  ];
  const portalReps: (PortalRep & { rep: number; kind: string })[] = [];
  const baselineReps: { rep: number; kind: string; ms: number; rows: number }[] = [];
  const total = o.warmupReps + o.reps;
  for (let i = 0; i < total; i++) {
    const measured = i >= o.warmupReps;
    if (measured && o.quietWaitS > 0) {
      const quiet = await waitForQuietMachine({
        maxBusyPercent: 25,
        timeoutMs: o.quietWaitS * 1000,
        signal: interrupted,
      });
      if (quiet.busyPercent !== null && quiet.busyPercent > 25)
        log(`  (the machine is still busy: ${quiet.busyPercent}% of a core used by others)`);
    }
    const change = changeOf(i, today);
    const kind = 'status' in change ? 'status' : 'exception';
    const p = await portalRep(portal, token, fingerprints, change);
    if (p.matched !== o.bulk || p.changed !== o.bulk)
      throw new Error(`rep ${i}: matched ${p.matched}, changed ${p.changed}, expected ${o.bulk}`);
    await checkCounts(control, o, change);
    const b = await baselineRep(baselineDb, fingerprints, change);
    if (b.rows !== o.bulk) throw new Error(`baseline rep ${i}: ${b.rows} rows updated`);
    const label = measured ? `#${i - o.warmupReps + 1}` : `warm-up ${i + 1}`;
    log(
      `  ${label.padEnd(10)} ${kind.padEnd(9)} portal ${p.ms.toFixed(1).padStart(8)} ms   baseline ${b.ms.toFixed(1).padStart(7)} ms`,
    );
    if (!measured) continue;
    portalReps.push({ ...p, rep: i - o.warmupReps + 1, kind });
    baselineReps.push({ ...b, rep: i - o.warmupReps + 1, kind });
    rows.push([
      label,
      kind,
      p.ms.toFixed(1),
      b.ms.toFixed(1),
      `${p.cpuPercent['portal'] ?? '-'}%`,
      `${p.cpuPercent['postgres'] ?? '-'}%`,
      p.cpuMs ?? '-',
      `${p.cpuPercent['other'] ?? '-'}%`,
    ]);
  }

  // One more request (the next kind in turn) with the statement log on.
  const extra = changeOf(total, today);
  const logged = await withStatementLog(control, portal, () => portalRep(portal, token, fingerprints, extra));
  const breakdown =
    logged === null
      ? null
      : {
          wallMs: logged.result.ms,
          kind: 'status' in extra ? 'status' : 'exception',
          dbMs: round(
            logged.statements.reduce((a, s) => a + s.ms, 0),
            2,
          ),
          statements: logged.statements
            .filter((s) => s.ms >= 0.5)
            .map((s) => ({ ms: s.ms, phase: s.phase, sql: oneLine(s.sql, 140) })),
          statementCount: logged.statements.filter((s) => s.phase !== 'parse' && s.phase !== 'bind').length,
        };

  const summarise = (kind: string | null) => {
    const ps = portalReps.filter((r) => kind === null || r.kind === kind).map((r) => r.ms);
    const bs = baselineReps.filter((r) => kind === null || r.kind === kind).map((r) => r.ms);
    const pm = median(ps);
    const bm = median(bs);
    const cpu = portalReps
      .filter((r) => (kind === null || r.kind === kind) && r.cpuMs !== null)
      .map((r) => r.cpuMs as number);
    return {
      n: ps.length,
      portalCpuMedianMs: cpu.length === 0 ? null : round(median(cpu), 1),
      portalMedianMs: round(pm, 1),
      portalMaxMs: round(Math.max(...ps), 1),
      baselineMedianMs: round(bm, 1),
      baselineMaxMs: round(Math.max(...bs), 1),
      ratio: round(pm / bm, 1),
      met: Math.max(...ps) < BUDGET_MS,
    };
  };
  const summary = { all: summarise(null), status: summarise('status'), exception: summarise('exception') };

  log('');
  log(table(rows));
  log('');
  log(
    table([
      [
        'change',
        'n',
        'portal median ms',
        'portal max ms',
        'portal+PG CPU median ms',
        'baseline median ms',
        'baseline max ms',
        'portal / baseline',
        `< ${BUDGET_MS} ms`,
      ],
      ...(['status', 'exception', 'all'] as const).map((k) => {
        const s = summary[k];
        return [
          k === 'status' ? 'status + note' : k === 'exception' ? 'exception' : 'all',
          s.n,
          s.portalMedianMs,
          s.portalMaxMs,
          s.portalCpuMedianMs ?? '-',
          s.baselineMedianMs,
          s.baselineMaxMs,
          s.ratio,
          s.met ? 'met' : 'NOT met',
        ];
      }),
    ]),
  );
  if (breakdown !== null) {
    log(
      `\none more ${breakdown.kind} change with PostgreSQL's statement log on: ${breakdown.wallMs.toFixed(1)} ms wall, ${breakdown.dbMs.toFixed(1)} ms inside PostgreSQL in ${breakdown.statementCount} statements; those of 0.5 ms or more:`,
    );
    for (const s of breakdown.statements) log(`  ${s.ms.toFixed(2).padStart(9)} ms  ${s.phase.padEnd(9)} ${s.sql}`);
  }

  const file = writeResult(
    'records-bulk',
    {
      benchmark: 'records-bulk',
      description: `POST /api/findings/bulk of ${o.bulk} findings (status+note and exception in turn) on a target of ${o.sessions} sessions × ${o.findings} findings, vs one UPDATE … WHERE fingerprint = ANY($3) through pg`,
      startedAt: started.toISOString(),
      finishedAt: new Date().toISOString(),
      machine,
      postgres: (await control.query<{ version: string }>('SELECT version()')).rows[0]?.version ?? null,
      loadAverage: { atStart: loadAtStart, atEnd: os.loadavg().map((v) => round(v, 2)) },
      options: o,
      uploads,
      stored,
      budgetMs: BUDGET_MS,
      summary,
      baselineStatements: {
        status: baselineStatement(changeOf(0, today)).text,
        exception: baselineStatement(changeOf(1, today)).text,
      },
      portalReps,
      baselineReps,
      dbBreakdown: breakdown,
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
