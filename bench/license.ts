/**
 * Benchmark: GET /api/license with a valid license key (x-api-key), on the real portal
 * (Fastify + embedded PostgreSQL, its own process) against a bare node:http server that
 * answers the very bytes the portal answered (its own process too). Runs alternate
 * baseline, portal, baseline, portal ...; the median of each side and the ratio
 * portal/baseline are printed and written to bench/results/license-<timestamp>.json.
 *
 *   npm run bench [-- --duration=10 --warmup=3 --connections=50 --rounds=3]
 *
 * See bench/README.md.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LicenseValidation } from '@svc/protocol';
import { routeFromAnswer, startBaseline } from './lib/baseline.ts';
import { interrupted } from './lib/cleanup.ts';
import { waitForQuietMachine, type CpuTarget } from './lib/cpu.ts';
import { problemsOf, runLoad, type LoadSummary } from './lib/load.ts';
import { machineInfo } from './lib/machine.ts';
import { parseBenchOptions, usage, type BenchOptions } from './lib/options.ts';
import { adminToken, createLicense, startPortalProcess } from './lib/portal.ts';
import { RESULTS_DIR, stampOf, table, writeResult } from './lib/report.ts';
import { median, round } from './lib/stats.ts';
import { benchmarkMain } from './lib/main.ts';

const PATH = '/api/license';

type Side = 'baseline' | 'portal';

interface Target {
  side: Side;
  url: string;
  cpu: CpuTarget[];
}

interface SideSummary {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU time of the server process per answer, microseconds (portal: plus its PostgreSQL). */
  serverCpuUsPerRequest: number;
  runs: number;
}

function log(message: string): void {
  console.log(message);
}

function summarize(runs: LoadSummary[]): SideSummary {
  return {
    rps: round(median(runs.map((r) => r.rps)), 1),
    p50Ms: round(median(runs.map((r) => r.latencyMs.p50)), 3),
    p99Ms: round(median(runs.map((r) => r.latencyMs.p99)), 3),
    serverCpuUsPerRequest: round(median(runs.map(serverUs)), 1),
    runs: runs.length,
  };
}

/** Server CPU per answer, µs: the server process plus, for the portal, its PostgreSQL. */
function serverUs(r: LoadSummary): number {
  return (r.cpuUsPerRequest['server'] ?? Number.NaN) + (r.cpuUsPerRequest['postgres'] ?? 0);
}

function cpuCell(v: number | null | undefined): string {
  return v === null || v === undefined ? '-' : `${v.toFixed(0)}%`;
}

async function run(opts: BenchOptions): Promise<void> {
  const started = new Date();
  const machine = machineInfo();
  const loadAtStart = os.loadavg().map((v) => round(v, 2));
  log(
    `license benchmark: GET ${PATH}, ${opts.connections} connections, pipelining ${opts.pipelining}, ` +
      `${opts.warmupS} s warm-up + ${opts.durationS} s measured per run, ${opts.rounds} round(s) of baseline then portal`,
  );
  log(
    `machine: ${machine.cpus} CPUs (${machine.cpuModel}), Node ${machine.node}, ${machine.platform}, load average ${loadAtStart.join(' ')}`,
  );

  const profileDir = path.join(RESULTS_DIR, `license-${stampOf(started)}-profile`);
  if (opts.profile)
    log(`profiling the portal into ${profileDir}: its figures are slowed by the profiler, do not report them`);
  log('starting the portal (embedded PostgreSQL in a fresh temp dir) ...');
  const t0 = Date.now();
  const portal = await startPortalProcess({
    echo: opts.verbose,
    nodeArgs: opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
  });
  log(
    `portal up at ${portal.url} (pid ${portal.child.pid}, PostgreSQL on port ${portal.pgPort}) in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
  );

  const token = await adminToken(portal);
  const key = await createLicense(portal, token, { tier: 'business', client_id: 'bench', name: 'bench' });
  const headers = { 'x-api-key': key };

  // The portal's own answer is what the baseline will send back, byte for byte.
  const captured = await fetch(`${portal.url}${PATH}`, { headers, signal: AbortSignal.timeout(10_000) });
  const body = Buffer.from(await captured.arrayBuffer());
  if (captured.status !== 200)
    throw new Error(`GET ${PATH}: HTTP ${captured.status} ${body.toString('utf8').slice(0, 300)}`);
  const validation = JSON.parse(body.toString('utf8')) as LicenseValidation;
  if (!validation.valid || validation.reason !== 'ok' || validation.tier !== 'business') {
    throw new Error(`GET ${PATH}: the new key does not validate: ${body.toString('utf8')}`);
  }
  log(`captured the portal's answer (${body.length} bytes): ${body.toString('utf8')}`);

  const baseline = await startBaseline(
    [routeFromAnswer('GET', PATH, { status: captured.status, headers: captured.headers, body })],
    { echo: opts.verbose },
  );
  const check = await fetch(`${baseline.url}${PATH}`, { headers, signal: AbortSignal.timeout(10_000) });
  const checkBody = Buffer.from(await check.arrayBuffer());
  if (check.status !== 200 || !checkBody.equals(body))
    throw new Error('the baseline does not answer the captured bytes');
  log(`baseline up at ${baseline.url} (pid ${baseline.child.pid})`);

  const postgres: CpuTarget = { name: 'postgres', pid: () => portal.postmasterPid(), withChildren: true };
  const targets: Target[] = [
    { side: 'baseline', url: baseline.url, cpu: [{ name: 'server', pid: () => baseline.child.pid }] },
    { side: 'portal', url: portal.url, cpu: [{ name: 'server', pid: () => portal.child.pid }, postgres] },
  ];

  const runs: (LoadSummary & {
    side: Side;
    round: number;
    machineBusyBeforePercent: number | null;
    waitedForQuietS: number;
  })[] = [];
  const rows: (string | number)[][] = [
    [
      'run',
      'req/s',
      'p50 ms',
      'p90 ms',
      'p99 ms',
      'max ms',
      'server CPU',
      'postgres CPU',
      'loadgen CPU',
      'other CPU',
      'server µs/req',
    ],
  ];
  const common = {
    method: 'GET',
    headers,
    connections: opts.connections,
    pipelining: opts.pipelining,
    maxRequests: opts.maxRequests,
    signal: interrupted,
  };

  for (let round = 1; round <= opts.rounds; round++) {
    for (const target of targets) {
      const label = `${target.side} #${round}`;
      let quiet: { busyPercent: number | null; waitedMs: number } = { busyPercent: null, waitedMs: 0 };
      if (opts.quietWaitS > 0) {
        quiet = await waitForQuietMachine({
          maxBusyPercent: opts.quietBusyPercent,
          timeoutMs: opts.quietWaitS * 1000,
          signal: interrupted,
        });
        if (quiet.busyPercent !== null && quiet.busyPercent > opts.quietBusyPercent) {
          log(
            `  (the machine is still busy: ${quiet.busyPercent}% of a core used by others after ${Math.round(quiet.waitedMs / 1000)} s; running ${label} anyway)`,
          );
        }
      }
      if (opts.warmupS > 0) {
        const warm = await runLoad({
          ...common,
          title: `${label} warm-up`,
          url: `${target.url}${PATH}`,
          durationS: opts.warmupS,
        });
        const problem = problemsOf(warm);
        if (problem) throw new Error(problem);
      }
      const measured = await runLoad({
        ...common,
        title: label,
        url: `${target.url}${PATH}`,
        durationS: opts.durationS,
        cpu: target.cpu,
      });
      const problem = problemsOf(measured);
      if (problem) throw new Error(problem);
      runs.push({
        ...measured,
        side: target.side,
        round,
        machineBusyBeforePercent: quiet.busyPercent,
        waitedForQuietS: round1(quiet.waitedMs / 1000),
      });
      const l = measured.latencyMs;
      log(
        `  ${label.padEnd(12)} ${measured.rps.toFixed(0).padStart(7)} req/s   p50 ${l.p50.toFixed(2)} ms   p99 ${l.p99.toFixed(2)} ms   ` +
          `(${measured.requests2xx} answers in ${measured.durationS} s; CPU server ${cpuCell(measured.cpuPercent['server'])}, loadgen ${cpuCell(measured.cpuPercent['loadgen'])}` +
          `${target.side === 'portal' ? `, postgres ${cpuCell(measured.cpuPercent['postgres'])}` : ''}, other ${cpuCell(measured.cpuPercent['other'])})`,
      );
      rows.push([
        label,
        round0(measured.rps),
        l.p50.toFixed(2),
        l.p90.toFixed(2),
        l.p99.toFixed(2),
        l.max.toFixed(2),
        cpuCell(measured.cpuPercent['server']),
        target.side === 'portal' ? cpuCell(measured.cpuPercent['postgres']) : '-',
        cpuCell(measured.cpuPercent['loadgen']),
        cpuCell(measured.cpuPercent['other']),
        serverUs(measured).toFixed(1),
      ]);
    }
  }

  const baselineSummary = summarize(runs.filter((r) => r.side === 'baseline'));
  const portalSummary = summarize(runs.filter((r) => r.side === 'portal'));
  const ratio = {
    throughput: round(portalSummary.rps / baselineSummary.rps, 3),
    p50: round(portalSummary.p50Ms / baselineSummary.p50Ms, 3),
    p99: round(portalSummary.p99Ms / baselineSummary.p99Ms, 3),
    serverCpuPerRequest: round(portalSummary.serverCpuUsPerRequest / baselineSummary.serverCpuUsPerRequest, 3),
  };

  const summaryRows: (string | number)[][] = [
    ['median of runs', 'req/s', 'p50 ms', 'p99 ms', 'server CPU µs/req'],
    [
      'baseline (node:http)',
      round0(baselineSummary.rps),
      baselineSummary.p50Ms.toFixed(2),
      baselineSummary.p99Ms.toFixed(2),
      baselineSummary.serverCpuUsPerRequest.toFixed(1),
    ],
    [
      'portal',
      round0(portalSummary.rps),
      portalSummary.p50Ms.toFixed(2),
      portalSummary.p99Ms.toFixed(2),
      portalSummary.serverCpuUsPerRequest.toFixed(1),
    ],
    [
      'portal / baseline',
      ratio.throughput.toFixed(3),
      `${ratio.p50.toFixed(2)}x`,
      `${ratio.p99.toFixed(2)}x`,
      `${ratio.serverCpuPerRequest.toFixed(2)}x`,
    ],
  ];
  log('');
  log(
    'CPU is in % of one core (the machine has ' +
      machine.cpus +
      '); "other" is everything on the machine that is not the benchmark.',
  );
  log(table(rows));
  log('');
  log(table(summaryRows));
  log('');
  log(
    `The portal serves ${(ratio.throughput * 100).toFixed(1)}% of the baseline's throughput and spends ` +
      `${ratio.serverCpuPerRequest.toFixed(2)}x its CPU time per answer (${portalSummary.serverCpuUsPerRequest.toFixed(1)} vs ${baselineSummary.serverCpuUsPerRequest.toFixed(1)} µs).`,
  );
  const contended = runs.filter((r) => (r.cpuPercent['other'] ?? 0) > opts.quietBusyPercent);
  if (contended.length > 0) {
    log(
      `warning: ${contended.length} of ${runs.length} runs shared the machine with other work (other CPU > ${opts.quietBusyPercent}% of a core: ` +
        `${contended.map((r) => `${r.title} ${cpuCell(r.cpuPercent['other'])}`).join(', ')}); their figures are less reliable.`,
    );
  }

  const file = writeResult(
    'license',
    {
      benchmark: 'license',
      description: `GET ${PATH} with a valid business license key (x-api-key): the portal vs a bare node:http server answering the same bytes`,
      startedAt: started.toISOString(),
      finishedAt: new Date().toISOString(),
      profiled: opts.profile,
      machine,
      loadAverage: { atStart: loadAtStart, atEnd: os.loadavg().map((v) => round(v, 2)) },
      options: opts,
      request: { method: 'GET', path: PATH, headers: { 'x-api-key': '[a valid business key]' } },
      answer: {
        status: captured.status,
        bytes: body.length,
        body: validation,
        baselineHeaders: routeFromAnswer('GET', PATH, { status: captured.status, headers: captured.headers, body })
          .headers,
      },
      summary: { baseline: baselineSummary, portal: portalSummary, ratio },
      runs,
    },
    started,
  );
  log(`result written to ${file}`);
  if (opts.profile) {
    await portal.stop(); // the profile is written when the portal exits
    for (const f of fs.readdirSync(profileDir))
      log(`portal CPU profile: ${path.join(profileDir, f)} (summary: node bench/lib/profile-summary.ts <file>)`);
  }
}

function round0(n: number): number {
  return Math.round(n);
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}

const main = () =>
  benchmarkMain({
    parse: () => parseBenchOptions(),
    usage: () => usage('bench/license.ts'),
    run: run,
    log,
    cleans: 'stopping the portal, PostgreSQL and the baseline; removing the temp dir',
  });

process.exitCode = await main();
