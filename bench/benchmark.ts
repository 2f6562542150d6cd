/**
 * Benchmark: GET /api/benchmark with 200,000 sessions over 500 clients (8 targets each, so
 * 4,000 client/target pairs of 50 sessions), served from the benchmark snapshot.
 *
 * One run, one real portal (startPortal in this process, its own embedded PostgreSQL in a
 * temp dir), sequential requests (one at a time: latency, not throughput):
 * - portal: GET /api/benchmark?session=<a random seeded session> over HTTP with the legacy key;
 * - baseline: GET /api/license with the same key over the same HTTP path (routing, key
 *   check, serialisation; from the key cache, no database round trip), and
 *   `SELECT ... FROM sessions WHERE client_id = $1 AND session_id = $2` through the portal's own pool: the
 *   database round trip the benchmark answer needs anyway (the session's own values);
 * - in process (informational): benchmarkSession() called directly (the session's own
 *   values from the database, then the snapshot comparison), without HTTP and access checks;
 * - rebuild (informational): building the snapshot once, the latest-session scan over every
 *   client's pairs that every call ran before the snapshot (621 ms per call at this size then).
 *
 *   node bench/benchmark.ts [--sessions=200000 --clients=500 --targets=8 --requests=500]
 *
 * Results: bench/results/benchmark-<timestamp>.json.
 */
import { randomBytes, randomInt } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '@svc/portal/config';
import { startPortal, type Portal } from '@svc/portal/server';
import { latestPairMetrics } from '@svc/portal/sessions/benchmark';
import { benchmarkSession } from '@svc/portal/sessions/benchmark-session';
import { freePort } from '@svc/test-support/ports';
import { table, writeResult } from './lib/report.ts';
import { round } from './lib/stats.ts';

function option(name: string, fallback: number): number {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  const n = arg === undefined ? fallback : Number(arg.split('=')[1]);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`);
  return n;
}

const SESSIONS = option('sessions', 200_000);
const CLIENTS = option('clients', 500);
const TARGETS = option('targets', 8);
const REQUESTS = option('requests', 500);
const LEGACY_KEY = `bench-legacy-${randomBytes(16).toString('hex')}`;

interface Summary {
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  mean_ms: number;
}

function summarise(ms: number[]): Summary {
  const s = [...ms].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
  return {
    p50_ms: round(at(50), 3),
    p90_ms: round(at(90), 3),
    p99_ms: round(at(99), 3),
    mean_ms: round(s.reduce((a, b) => a + b, 0) / s.length, 3),
  };
}

async function timed(count: number, fn: (i: number) => Promise<void>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await fn(i);
    out.push(performance.now() - t);
  }
  return out;
}

async function get(url: string): Promise<void> {
  const res = await fetch(url, { headers: { 'x-api-key': LEGACY_KEY }, signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${text.slice(0, 200)}`);
}

/** The client seed() gave session `bench_<g>`. */
const clientOf = (sessionId: string): string => `client-${Number(sessionId.slice('bench_'.length)) % CLIENTS}`;

async function seed(portal: Portal): Promise<void> {
  // Every session: client c (of CLIENTS), target t (of TARGETS), a risk score, findings, hosts and severities.
  await portal.ctx.pool.query(
    `INSERT INTO sessions (session_id, client_id, client, target, risk_score, risk_grade, metadata, files, uploaded_at, updated_at, expires_at)
     SELECT 'bench_' || lpad(g::text, 7, '0'), 'client-' || (g % $2), 'Client ' || (g % $2), 't' || ((g / $2) % $3),
            (g * 7919 % 101)::float8, 'C',
            jsonb_build_object('total_findings', g % 40, 'total_hosts', 1 + g % 9,
              'severity_summary', jsonb_build_object('critical', g % 3, 'high', g % 5, 'medium', g % 7, 'low', g % 11, 'info', g % 13)),
            '[]'::jsonb, now() - make_interval(secs => g), now(), now() + interval '90 days'
     FROM generate_series(1, $1::int) g`,
    [SESSIONS, CLIENTS, TARGETS],
  );
  await portal.ctx.pool.query('ANALYZE sessions');
}

async function main(): Promise<void> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-bench-benchmark-'));
  await fs.chmod(dataDir, 0o755);
  let portal: Portal | null = null;
  try {
    const config = loadConfig({
      SVC_DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      SVC_EMBEDDED_PG_PORT: String(await freePort()),
      SVC_LOG_LEVEL: 'warn',
      SVC_UPLOAD_API_KEY: LEGACY_KEY,
      SVC_ADMIN_EMAIL: 'bench@bench.local',
      SVC_ADMIN_PASSWORD: randomBytes(16).toString('hex'),
    });
    portal = await startPortal(config);
    const seedStart = performance.now();
    await seed(portal);
    console.log(
      `seeded ${SESSIONS} sessions over ${CLIENTS} clients x ${TARGETS} targets in ${round((performance.now() - seedStart) / 1000, 1)} s`,
    );

    const ids = Array.from({ length: REQUESTS }, () => `bench_${String(randomInt(1, SESSIONS + 1)).padStart(7, '0')}`);
    const rebuild = await timed(5, async () => void (await latestPairMetrics(portal!.ctx.db)));
    // The first request builds the snapshot; the rest are served from it. Warm-up for every side.
    await get(`${portal.url}/api/benchmark?session=${ids[0]}`);
    for (let i = 0; i < 50; i++) {
      await get(`${portal.url}/api/benchmark?session=${ids[i % ids.length]}`);
      await get(`${portal.url}/api/license`);
    }
    // Alternate the sides in blocks so drift on a shared machine hits both.
    const bench: number[] = [];
    const license: number[] = [];
    const pk: number[] = [];
    const direct: number[] = [];
    for (let block = 0; block < 5; block++) {
      const part = ids.slice((block * REQUESTS) / 5, ((block + 1) * REQUESTS) / 5);
      license.push(...(await timed(part.length, () => get(`${portal!.url}/api/license`))));
      bench.push(...(await timed(part.length, (i) => get(`${portal!.url}/api/benchmark?session=${part[i]}`))));
      pk.push(
        ...(await timed(
          part.length,
          async (i) =>
            void (await portal!.ctx.pool.query(
              'SELECT session_id, client_id, risk_score, metadata FROM sessions WHERE client_id = $1 AND session_id = $2',
              [clientOf(part[i]!), part[i]],
            )),
        )),
      );
      direct.push(
        ...(await timed(
          part.length,
          async (i) =>
            void (await benchmarkSession(portal!.ctx, { clientId: clientOf(part[i]!), sessionId: part[i]! })),
        )),
      );
    }
    const rows = {
      benchmark_http: summarise(bench),
      baseline_license_http: summarise(license),
      baseline_pk_select: summarise(pk),
      benchmark_in_process: summarise(direct),
      snapshot_rebuild: summarise(rebuild),
    };
    const ratio = round(rows.benchmark_http.p50_ms / rows.baseline_license_http.p50_ms, 2);
    console.log(
      table([
        ['side', 'n', 'p50 ms', 'p90 ms', 'p99 ms', 'mean ms'],
        [
          'GET /api/benchmark (snapshot)',
          bench.length,
          rows.benchmark_http.p50_ms,
          rows.benchmark_http.p90_ms,
          rows.benchmark_http.p99_ms,
          rows.benchmark_http.mean_ms,
        ],
        [
          'baseline GET /api/license',
          license.length,
          rows.baseline_license_http.p50_ms,
          rows.baseline_license_http.p90_ms,
          rows.baseline_license_http.p99_ms,
          rows.baseline_license_http.mean_ms,
        ],
        [
          'benchmarkSession() in process',
          direct.length,
          rows.benchmark_in_process.p50_ms,
          rows.benchmark_in_process.p90_ms,
          rows.benchmark_in_process.p99_ms,
          rows.benchmark_in_process.mean_ms,
        ],
        [
          'baseline SELECT by primary key',
          pk.length,
          rows.baseline_pk_select.p50_ms,
          rows.baseline_pk_select.p90_ms,
          rows.baseline_pk_select.p99_ms,
          rows.baseline_pk_select.mean_ms,
        ],
        [
          'snapshot rebuild (per call before)',
          rebuild.length,
          rows.snapshot_rebuild.p50_ms,
          rows.snapshot_rebuild.p90_ms,
          rows.snapshot_rebuild.p99_ms,
          rows.snapshot_rebuild.mean_ms,
        ],
      ]),
    );
    console.log(
      `ratio benchmark / license p50: ${ratio}; rebuild / benchmark p50: ${round(rows.snapshot_rebuild.p50_ms / rows.benchmark_http.p50_ms, 1)}`,
    );
    const file = writeResult('benchmark', {
      options: { sessions: SESSIONS, clients: CLIENTS, targets: TARGETS, requests: REQUESTS },
      results: rows,
      ratio_benchmark_to_license_p50: ratio,
      loadavg: os.loadavg(),
    });
    console.log(`results: ${file}`);
  } finally {
    await portal?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

await main();
