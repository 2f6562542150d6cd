/**
 * `node bench/upload.ts --findings=10000,100000`: one session file of N findings uploaded to the
 * real portal (its own process, embedded PostgreSQL), timed from the first byte to the answer,
 * which means stored, indexed and merged into the findings of record (one transaction); the
 * session's findings total read right after (GET /api/sessions/{id}/findings?limit=1) is timed
 * as "queryable".
 *
 * Per size and round: a first scan of a new target (every finding new), a rescan under another
 * session id (new becomes persistent), a steady rescan under a third (nothing indexed changes),
 * then the baseline: the same file COPYed as one row per finding into a plain table in one
 * transaction (findings-body.ts). RSS: upload/rss.ts. Targets: 1.5 s at 10,000, 15 s at 100,000.
 */
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { UPLOAD_LIMIT_BYTES } from '@svc/protocol';
import { onCleanup } from '../lib/cleanup.ts';
import { startCpuSample, waitForQuietMachine, type CpuTarget } from '../lib/cpu.ts';
import { machineInfo } from '../lib/machine.ts';
import { controlConnection, databaseUrlOf, oneLine, withStatementLog } from '../lib/pg-log.ts';
import { startPortalProcess, type PortalProcess } from '../lib/portal.ts';
import { summarizeProfile, type CpuProfile } from '../lib/profile-summary.ts';
import { RESULTS_DIR, stampOf, table, writeResult } from '../lib/report.ts';
import { median, round } from '../lib/stats.ts';
import { upload, type UploadTarget } from './client.ts';
import { copyBaseline, createBaselineTable, roundUploads, shapeFor, type FindingsUpload } from './findings-body.ts';
import type { UploadOptions } from './options.ts';
import { readMem, type RssWindow, startRssSampler } from './rss.ts';

const HOST = '127.0.0.1';
const MiB = 1024 * 1024;
const mib = (kib: number): number => round(kib / 1024, 1);

/** The issue's targets: stored and indexed within this many ms. */
export function targetMsOf(findings: number): number | null {
  if (findings <= 10_000) return 1_500;
  if (findings <= 100_000) return 15_000;
  return null;
}

type Kind = 'first scan' | 'rescan' | 'steady rescan' | 'baseline (parse + COPY)';

interface Measure {
  findings: number;
  kind: Kind;
  round: number;
  warmup: boolean;
  ms: number;
  /** Answer -> findings total read back (portal only). */
  queryableMs: number | null;
  rssBeforeMiB: number | null;
  rssPeakMiB: number | null;
  cpuPercent: Record<string, number | null>;
  /** WAL PostgreSQL wrote meanwhile, and the checkpoints it started. */
  walMiB: number;
  checkpoints: number;
  otherBusyBeforePercent: number | null;
}

function log(message: string): void {
  console.log(message);
}

async function answerJson(target: UploadTarget, up: FindingsUpload, signal: AbortSignal) {
  const t0 = performance.now();
  const a = await upload(target, up.body, t0, signal);
  if (a.status !== 200) throw new Error(`upload of ${up.sessionId}: HTTP ${a.status} ${a.answer.slice(0, 300)}`);
  const j = JSON.parse(a.answer) as { session_id?: string; findings?: Record<string, number> | null };
  if (j.session_id !== up.sessionId) throw new Error(`upload of ${up.sessionId}: ${a.answer.slice(0, 300)}`);
  return { ms: a.doneMs - a.startMs, findings: j.findings ?? null };
}

async function findingsTotal(url: string, key: string, up: FindingsUpload): Promise<number> {
  const res = await fetch(
    `${url}/api/sessions/${up.sessionId}/findings?client_id=${encodeURIComponent(up.clientId)}&limit=1`,
    { headers: { 'x-api-key': key }, signal: AbortSignal.timeout(120_000) },
  );
  const text = await res.text();
  if (res.status !== 200) throw new Error(`findings of ${up.sessionId}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return (JSON.parse(text) as { total: number }).total;
}

interface WalState {
  lsn: string;
  checkpoints: number;
}

async function walState(db: pg.Client): Promise<WalState> {
  const { rows } = await db.query<{ lsn: string; n: string }>(
    'SELECT pg_current_wal_lsn()::text AS lsn, (SELECT num_timed + num_requested FROM pg_stat_checkpointer)::text AS n',
  );
  return { lsn: rows[0]?.lsn ?? '0/0', checkpoints: Number(rows[0]?.n ?? 0) };
}

async function walDelta(db: pg.Client, before: WalState): Promise<{ mib: number; checkpoints: number }> {
  const after = await walState(db);
  const { rows } = await db.query<{ bytes: string }>('SELECT pg_wal_lsn_diff($1, $2)::text AS bytes', [
    after.lsn,
    before.lsn,
  ]);
  return { mib: round(Number(rows[0]?.bytes ?? 0) / MiB, 1), checkpoints: after.checkpoints - before.checkpoints };
}

function printProfiles(dir: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')) : [];
  for (const f of files) {
    const s = summarizeProfile(JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as CpuProfile);
    const busy = s.totalMs - (s.byArea.find(([a]) => a === '(idle)')?.[1] ?? 0);
    const pct = (ms: number): string => `${((ms / busy) * 100).toFixed(1)}%`.padStart(6);
    log(`\nportal CPU profile ${path.join(dir, f)}: ${(busy / 1000).toFixed(2)} s busy (start-up included)`);
    log('self time by area:');
    for (const [a, ms] of s.byArea.filter(([a]) => a !== '(idle)').slice(0, 12)) log(`  ${pct(ms)}  ${a}`);
    log('self time by function:');
    for (const [fn, ms] of s.bySelf.filter(([fn]) => !fn.startsWith('(idle)')).slice(0, 25)) log(`  ${pct(ms)}  ${fn}`);
    log("inclusive time by the project's functions:");
    for (const [fn, ms] of s.byTotal.filter(([fn]) => fn.includes('packages/')).slice(0, 40))
      log(`  ${pct(ms)}  ${fn}`);
    out[f] = {
      busyMs: round(busy, 0),
      byArea: s.byArea.slice(0, 20),
      bySelf: s.bySelf.slice(0, 40),
      byTotal: s.byTotal.slice(0, 60),
    };
  }
  return out;
}

/** One more first scan, rescan and steady rescan of the first size with PostgreSQL's statement log on: their time by statement. */
async function statementBreakdown(
  opts: UploadOptions,
  db: pg.Client,
  portal: PortalProcess,
  target: UploadTarget,
  signal: AbortSignal,
) {
  const n = opts.findings[0] ?? 0;
  const clientId = `bench-log-${randomBytes(4).toString('hex')}`;
  const shape = shapeFor(n, opts.shape, UPLOAD_LIMIT_BYTES);
  const out: Record<string, unknown> = {};
  for (const [kind, up] of roundUploads(n, shape, clientId)) {
    const logged = await withStatementLog(db, portal, () => answerJson(target, up, signal));
    if (logged === null) return null;
    const bySql = new Map<string, { ms: number; count: number }>();
    for (const s of logged.statements) {
      const key = `${s.phase} ${oneLine(s.sql, 110)}`;
      const e = bySql.get(key) ?? { ms: 0, count: 0 };
      e.ms += s.ms;
      e.count++;
      bySql.set(key, e);
    }
    const top = [...bySql].sort((x, y) => y[1].ms - x[1].ms).slice(0, 15);
    const dbMs = logged.statements.reduce((x, s) => x + s.ms, 0);
    log(
      `\nstatement log, one ${kind} of ${n} findings: ${(logged.result.ms / 1000).toFixed(2)} s, ${(dbMs / 1000).toFixed(2)} s in PostgreSQL`,
    );
    for (const [sqlText, e] of top) log(`  ${e.ms.toFixed(0).padStart(7)} ms  x${e.count}  ${sqlText}`);
    out[kind] = {
      wallMs: round(logged.result.ms, 1),
      dbMs: round(dbMs, 1),
      top: top.map(([t, e]) => ({ sql: t, ...e })),
    };
  }
  return out;
}

export async function runFindings(opts: UploadOptions, signal: AbortSignal): Promise<void> {
  const started = new Date();
  const machine = machineInfo();
  const loadAtStart = os.loadavg().map((v) => round(v, 2));
  const profileDir = path.join(RESULTS_DIR, `upload-findings-${stampOf(started)}-profile`);
  log(
    `upload benchmark, findings mode: sessions of ${opts.findings.join(', ')} findings, ${opts.warmupRounds} warm-up + ${opts.rounds} measured round(s)`,
  );
  log(
    `machine: ${machine.cpus} CPUs (${machine.cpuModel}), Node ${machine.node}, load average ${loadAtStart.join(' ')}`,
  );
  if (opts.profile)
    log(`profiling the portal into ${profileDir}: the figures are slowed by the profiler, do not report them`);

  const apiKey = randomBytes(24).toString('base64url');
  const portal = await startPortalProcess({
    echo: opts.verbose,
    env: { SVC_UPLOAD_API_KEY: apiKey },
    // As `npm start`, the systemd unit and the release run it (bench/README.md, "Upload").
    nodeArgs: [
      '--heap-growing-percent=100',
      ...opts.nodeArgs,
      ...(opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
    ],
  });
  log(`portal up at ${portal.url} (pid ${portal.child.pid}, PostgreSQL on port ${portal.pgPort})`);
  const db = await controlConnection(databaseUrlOf(portal), 'bench-findings-baseline');
  await createBaselineTable(db);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  onCleanup('close the HTTP agent', () => agent.destroy());
  const target: UploadTarget = {
    host: HOST,
    port: portal.port,
    path: '/api/upload',
    headers: { 'x-api-key': apiKey },
    agent,
  };
  const postgres: CpuTarget = { name: 'postgres', pid: () => portal.postmasterPid(), withChildren: true };
  const cpuTargets: CpuTarget[] = [{ name: 'server', pid: () => portal.child.pid }, postgres];
  const idleRss = readMem(portal.child.pid)?.rssKiB ?? Number.NaN;
  log(`portal idle RSS ${mib(idleRss)} MiB`);

  const measures: Measure[] = [];
  const bodies: Record<number, { shape: string; bytes: number }> = {};
  for (const n of opts.findings) {
    const shape = shapeFor(n, opts.shape, UPLOAD_LIMIT_BYTES);
    for (let i = 1; i <= opts.warmupRounds + opts.rounds; i++) {
      const warmup = i <= opts.warmupRounds;
      const roundNo = warmup ? 0 : i - opts.warmupRounds;
      const clientId = `bench-${n}-${i}-${randomBytes(4).toString('hex')}`;
      const scans = roundUploads(n, shape, clientId);
      const [[, first]] = scans;
      if (first.body.length > UPLOAD_LIMIT_BYTES)
        throw new Error(
          `${n} ${shape} findings are ${first.body.length} bytes, over the upload limit: use --shape=lean`,
        );
      bodies[n] = { shape, bytes: first.body.length };
      for (const [kind, up] of [...scans, ['baseline (parse + COPY)', first] as const]) {
        if (opts.sync) await sleep(200, undefined, { signal });
        const quiet =
          opts.quietWaitS > 0
            ? await waitForQuietMachine({
                maxBusyPercent: opts.quietBusyPercent,
                timeoutMs: opts.quietWaitS * 1000,
                signal,
              })
            : { busyPercent: null };
        const portalSide = kind !== 'baseline (parse + COPY)';
        const wal0 = await walState(db);
        const rss = startRssSampler(portal.child.pid, opts.sampleMs);
        const cpu = startCpuSample(cpuTargets);
        let cpuPercentHolder: Record<string, number | null> = {};
        let window: RssWindow | undefined;
        let ms = 0;
        let queryableMs: number | null = null;
        try {
          if (portalSide) {
            const a = await answerJson(target, up, signal);
            ms = a.ms;
            const seen =
              (a.findings?.['new'] ?? 0) + (a.findings?.['persistent'] ?? 0) + (a.findings?.['reopened'] ?? 0);
            if (seen !== n) throw new Error(`${kind} of ${n}: the answer counts ${JSON.stringify(a.findings)}`);
            const q0 = performance.now();
            const total = await findingsTotal(portal.url, apiKey, up);
            queryableMs = performance.now() - q0;
            if (total !== n) throw new Error(`${kind} of ${n}: ${total} findings indexed`);
          } else {
            const t0 = performance.now();
            const stored = await copyBaseline(db, up);
            ms = performance.now() - t0;
            if (stored !== n) throw new Error(`baseline of ${n}: ${stored} rows`);
          }
        } finally {
          cpuPercentHolder = cpu.stop();
          window = rss.stop();
        }
        const wal = await walDelta(db, wal0);
        const cpuPercent = cpuPercentHolder;
        const w = window;
        const m: Measure = {
          findings: n,
          kind,
          round: roundNo,
          warmup,
          ms: round(ms, 1),
          queryableMs: queryableMs === null ? null : round(ms + queryableMs, 1),
          rssBeforeMiB: portalSide && w ? mib(w.beforeKiB) : null,
          rssPeakMiB: portalSide && w ? mib(w.peakKiB) : null,
          cpuPercent,
          walMiB: wal.mib,
          checkpoints: wal.checkpoints,
          otherBusyBeforePercent: quiet.busyPercent,
        };
        measures.push(m);
        log(
          `  ${String(n).padStart(7)} ${kind.padEnd(24)} ${warmup ? 'warm-up' : `#${roundNo}`.padEnd(7)} ${(m.ms / 1000).toFixed(2).padStart(6)} s` +
            (portalSide
              ? `  queryable ${((m.queryableMs ?? 0) / 1000).toFixed(2)} s  RSS ${m.rssBeforeMiB} -> ${m.rssPeakMiB} MiB  CPU portal ${cpuPercent['server']}% postgres ${cpuPercent['postgres']}% other ${cpuPercent['other']}%`
              : `  other CPU ${cpuPercent['other']}%`) +
            `  WAL ${m.walMiB} MiB, ${m.checkpoints} checkpoint(s)`,
        );
      }
    }
  }

  const rows: (string | number)[][] = [
    [
      'findings',
      'upload',
      'body MB',
      'median s',
      'min s',
      'max s',
      'queryable s',
      'target s',
      'verdict',
      '/ baseline',
      'RSS peak MiB',
    ],
  ];
  const summary: Record<string, unknown>[] = [];
  for (const n of opts.findings) {
    const of = (kind: Kind) => measures.filter((m) => m.findings === n && m.kind === kind && !m.warmup);
    const base = median(of('baseline (parse + COPY)').map((m) => m.ms));
    const targetMs = targetMsOf(n);
    for (const kind of ['first scan', 'rescan', 'steady rescan', 'baseline (parse + COPY)'] as const) {
      const ms = of(kind).map((m) => m.ms);
      const med = median(ms);
      const portalSide = kind !== 'baseline (parse + COPY)';
      const met = targetMs === null || !portalSide ? null : Math.max(...ms) <= targetMs;
      const peak = portalSide ? Math.max(...of(kind).map((m) => m.rssPeakMiB ?? 0)) : null;
      const q = portalSide ? median(of(kind).map((m) => m.queryableMs ?? 0)) : null;
      summary.push({
        findings: n,
        kind,
        ...bodies[n],
        medianMs: med,
        minMs: Math.min(...ms),
        maxMs: Math.max(...ms),
        queryableMedianMs: q,
        targetMs,
        met,
        ratioToBaseline: portalSide ? round(med / base, 2) : 1,
        rssPeakMiB: peak,
      });
      rows.push([
        n,
        kind,
        ((bodies[n]?.bytes ?? 0) / 1e6).toFixed(1),
        (med / 1000).toFixed(2),
        (Math.min(...ms) / 1000).toFixed(2),
        (Math.max(...ms) / 1000).toFixed(2),
        q === null ? '-' : (q / 1000).toFixed(2),
        targetMs === null || !portalSide ? '-' : (targetMs / 1000).toFixed(1),
        met === null ? '-' : met ? 'met' : 'MISSED',
        portalSide ? `${(med / base).toFixed(1)}x` : '1.0x',
        peak === null ? '-' : peak.toFixed(1),
      ]);
    }
  }
  log('');
  log(
    `shapes: ${opts.findings.map((n) => `${n}: ${bodies[n]?.shape} (${((bodies[n]?.bytes ?? 0) / MiB).toFixed(1)} MiB)`).join(', ')}; "met" = every measured round within the target`,
  );
  log(table(rows));
  log(
    `portal idle RSS ${mib(idleRss)} MiB; load average at the end ${os
      .loadavg()
      .map((v) => round(v, 2))
      .join(' ')}`,
  );

  const statements = opts.statementLog ? await statementBreakdown(opts, db, portal, target, signal) : null;
  let profiles: Record<string, unknown> = {};
  if (opts.profile) {
    await portal.stop();
    profiles = printProfiles(profileDir);
  }
  const file = writeResult(
    'upload-findings',
    {
      benchmark: 'upload --findings',
      description:
        'one POST /api/upload of a session of N findings (stored, indexed and merged into the findings of record in its transaction) vs parsing the file and COPYing one row per finding',
      startedAt: started.toISOString(),
      finishedAt: new Date().toISOString(),
      profiled: opts.profile,
      machine,
      loadAverage: { atStart: loadAtStart, atEnd: os.loadavg().map((v) => round(v, 2)) },
      options: opts,
      idleRssMiB: mib(idleRss),
      summary,
      statements,
      measures,
      profiles,
    },
    started,
  );
  log(`result written to ${file}`);
}
