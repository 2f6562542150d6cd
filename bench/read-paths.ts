/**
 * Benchmark: the admin reads at scale: 200,000 sessions over 500 clients and
 * 1,000,000 audit events, every read answered in at most 50 ms.
 *
 * One real portal (its own process, embedded PostgreSQL in a temp dir), seeded straight in SQL
 * (bench/read-paths/seed.ts), then each read as the admin, one at a time, timed to the last byte:
 * one warm-up, then --runs (3) runs, the best reported against the 50 ms target. Baselines in
 * the same run: GET /api/me (the same sign-in, routing and serialisation, no data read) and the
 * listing's first page as one plain SELECT through pg (the database's share of the first read).
 *
 *   node bench/read-paths.ts [--sessions=200000 --clients=500 --targets=8 --events=1000000 --runs=3]
 *
 * Results: bench/results/read-paths-<timestamp>.json. See bench/README.md.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { onCleanup } from './lib/cleanup.ts';
import { machineInfo } from './lib/machine.ts';
import { benchmarkMain } from './lib/main.ts';
import { controlConnection, databaseUrlOf } from './lib/pg-log.ts';
import { adminToken, startPortalProcess } from './lib/portal.ts';
import { table, writeResult } from './lib/report.ts';
import { round } from './lib/stats.ts';
import { clientIdOf, type ReadScale, seedReads, sessionIdOf, targetOf } from './read-paths/seed.ts';

interface Options extends ReadScale {
  runs: number;
}

const USAGE = 'node bench/read-paths.ts [--sessions=200000 --clients=500 --targets=8 --events=1000000 --runs=3]';
const TARGET_MS = 50;

function parseOptions(argv: string[]): Options | 'help' {
  if (argv.includes('--help')) return 'help';
  const o: Options = { sessions: 200_000, clients: 500, targets: 8, events: 1_000_000, runs: 3 };
  for (const a of argv) {
    const m = /^--(sessions|clients|targets|events|runs)=(\d+)$/.exec(a);
    if (m === null) throw new Error(`unknown option ${a}`);
    const n = Number(m[2]);
    if (!Number.isInteger(n) || n < 1 || n > 10_000_000) throw new Error(`--${m[1]} must be 1 to 10,000,000`);
    o[m[1] as keyof Options] = n;
  }
  if (o.clients > 999) throw new Error('--clients must be at most 999');
  return o;
}

const log = (message: string) => console.log(message);

async function timed(url: string, token: string): Promise<{ ms: number; bytes: number }> {
  const t = performance.now();
  const res = await fetch(url, { headers: { 'x-identity-token': token } });
  const text = await res.text();
  const ms = performance.now() - t;
  if (res.status !== 200) throw new Error(`${url}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return { ms, bytes: text.length };
}

/** The reads, each a path under the portal; what every filter selects is in the seed's comment. */
function casesOf(o: Options): { name: string; path: string }[] {
  const day = 86_400_000;
  const from = new Date(Date.now() - 14 * day).toISOString();
  const to = new Date(Date.now() - 7 * day).toISOString();
  const client = clientIdOf(Math.min(42, o.clients - 1));
  return [
    { name: 'sessions, first page', path: '/api/sessions' },
    { name: 'sessions, client', path: `/api/sessions?client_id=${client}` },
    { name: 'sessions, target', path: `/api/sessions?target=${encodeURIComponent(targetOf(7, 3))}` },
    { name: 'sessions, status resolved', path: '/api/sessions?status=resolved' },
    { name: 'sessions, uploaded 14 to 7 days ago', path: `/api/sessions?uploaded_from=${from}&uploaded_to=${to}` },
    { name: 'sessions, search (q=client id)', path: `/api/sessions?q=${client}` },
    { name: 'sessions, search (q=part of a target)', path: `/api/sessions?q=${encodeURIComponent('10.7.3.')}` },
    { name: 'sessions, sort risk_score', path: '/api/sessions?sort=risk_score' },
    { name: 'sessions, sort target ascending', path: '/api/sessions?sort=target&order=asc' },
    { name: 'audit, 30 days', path: '/api/audit?days=30' },
    { name: 'audit, 90 days', path: '/api/audit?days=90' },
    { name: 'audit, 30 days, type', path: '/api/audit?days=30&type=status_changed' },
    { name: 'audit, 90 days, session', path: `/api/audit?days=90&session=${sessionIdOf(4242)}` },
    { name: 'audit, 30 days, limit 50', path: '/api/audit?days=30&limit=50' },
    { name: 'db-health', path: '/api/db-health' },
    { name: 'overview', path: '/api/overview' },
    { name: 'overview, 30 days', path: '/api/overview?days=30' },
    { name: 'overview posture', path: '/api/overview/posture' },
  ];
}

interface Measured {
  name: string;
  path: string;
  runs_ms: number[];
  best_ms: number;
  bytes: number;
}

async function measure(n: number, what: () => Promise<{ ms: number; bytes: number }>) {
  const first = await what(); // warm-up: plans cached, pages in memory
  const runs: number[] = [];
  for (let i = 0; i < n; i++) runs.push((await what()).ms);
  return { runs_ms: runs.map((x) => round(x, 1)), best_ms: round(Math.min(...runs), 1), bytes: first.bytes };
}

async function benchmark(o: Options): Promise<void> {
  const started = new Date();
  log(
    `read paths benchmark: ${o.sessions.toLocaleString('en')} sessions over ${o.clients} clients, ${o.events.toLocaleString('en')} audit events; best of ${o.runs}`,
  );
  log(
    `machine: ${os.cpus().length} CPUs, load average ${os
      .loadavg()
      .map((v) => round(v, 1))
      .join(' ')}`,
  );
  const portal = await startPortalProcess();
  const control = await controlConnection(databaseUrlOf(portal), 'bench-control');
  onCleanup('close the control connection', () => control.end());
  await seedReads(control, o, log);
  const admin = await adminToken(portal);

  const baselineMe = await measure(o.runs, () => timed(`${portal.url}/api/me`, admin));
  const baselineSql = await measure(o.runs, async () => {
    const t = performance.now();
    const { rows } = await control.query(
      'SELECT * FROM sessions ORDER BY uploaded_at DESC, session_id DESC, client_id DESC LIMIT 51',
    );
    return { ms: performance.now() - t, bytes: JSON.stringify(rows).length };
  });
  const results: Measured[] = [];
  for (const c of casesOf(o)) {
    results.push({ ...c, ...(await measure(o.runs, () => timed(`${portal.url}${c.path}`, admin))) });
  }

  const lines: (string | number)[][] = [['read', 'best ms', 'runs ms', 'target ms', 'met', '× GET /api/me', 'bytes']];
  for (const r of results) {
    lines.push([
      r.name,
      r.best_ms,
      r.runs_ms.join(' '),
      TARGET_MS,
      r.best_ms <= TARGET_MS ? 'yes' : 'NO',
      round(r.best_ms / baselineMe.best_ms, 1),
      r.bytes,
    ]);
  }
  lines.push(['baseline GET /api/me', baselineMe.best_ms, baselineMe.runs_ms.join(' '), '', '', 1, baselineMe.bytes]);
  lines.push([
    'baseline first page, one SELECT via pg',
    baselineSql.best_ms,
    baselineSql.runs_ms.join(' '),
    '',
    '',
    round(baselineSql.best_ms / baselineMe.best_ms, 1),
    baselineSql.bytes,
  ]);
  log(table(lines));
  const missed = results.filter((r) => r.best_ms > TARGET_MS);
  log(
    missed.length === 0
      ? `every read at most ${TARGET_MS} ms: met`
      : `${missed.length} of ${results.length} reads over ${TARGET_MS} ms: ${missed.map((r) => r.name).join('; ')}`,
  );
  log(
    `load average at the end ${os
      .loadavg()
      .map((v) => round(v, 1))
      .join(' ')}`,
  );
  const file = writeResult(
    'read-paths',
    {
      benchmark: 'read-paths',
      machine: machineInfo(),
      options: o,
      target_ms: TARGET_MS,
      baseline: { me: baselineMe, first_page_sql: baselineSql },
      cases: results,
    },
    started,
  );
  log(`result written to ${file}`);
}

process.exitCode = await benchmarkMain({
  parse: () => parseOptions(process.argv.slice(2)),
  usage: () => USAGE,
  run: benchmark,
  log,
  cleans: 'stopping the portal and PostgreSQL; removing the temp dir',
});
