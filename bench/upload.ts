/**
 * Benchmark: POST /api/upload with 4 concurrent uploads of just under 25 MB each (a small
 * session_json and a ~25 MB pipeline_log), on the real portal (Fastify, @fastify/multipart,
 * the file blob store, embedded PostgreSQL; its own process) against a bare node:http
 * server that streams each request body to a file and hashes it (SHA-256), then answers a
 * small JSON (its own process too: bench/upload/sink-server.ts). Rounds alternate
 * baseline, portal (and the informational baseline+fsync); per side the median MB/s, the
 * ratio portal/baseline and the server's RSS (before, peak, growth) during the uploads are
 * printed and written to bench/results/upload-<timestamp>.json.
 *
 *   node bench/upload.ts [--rounds=5 --warmup-rounds=1 --concurrency=4 --timeout=900]
 *   node bench/upload.ts --findings=10000,100000  (sessions of N findings: upload/findings-mode.ts; bench/README.md)
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { UPLOAD_LIMIT_BYTES } from '@svc/protocol';
import { spawnNode, waitForHttp, type NodeChild } from './lib/children.ts';
import { cleanupAll, installSignalHandlers, interrupted, onCleanup } from './lib/cleanup.ts';
import { startCpuSample, waitForQuietMachine, type CpuTarget } from './lib/cpu.ts';
import { machineInfo } from './lib/machine.ts';
import { OptionsError } from './lib/options.ts';
import { startPortalProcess, type PortalProcess } from './lib/portal.ts';
import { freePort } from '@svc/test-support/ports';
import { summarizeProfile } from './lib/profile-summary.ts';
import { RESULTS_DIR, stampOf, table, writeResult } from './lib/report.ts';
import { median, round } from './lib/stats.ts';
import {
  buildBody,
  framingBytes,
  logPayload,
  newSessionId,
  sha256Of,
  upload,
  type UploadBody,
  type UploadTarget,
  type UploadTiming,
} from './upload/client.ts';
import { runFindings } from './upload/findings-mode.ts';
import { parseUploadOptions, usage, type UploadOptions } from './upload/options.ts';
import { startRssSampler, readMem, type RssWindow } from './upload/rss.ts';
import type { SinkAnswer, SinkConfig } from './upload/sink-server.ts';
import { startThreadCpu, type ThreadCpu } from './upload/thread-cpu.ts';

type Side = 'baseline' | 'portal' | 'baseline+fsync';

const MB = 1e6;
const MiB = 1024 * 1024;
const HOST = '127.0.0.1';

interface SideTarget {
  side: Side;
  upload: UploadTarget;
  pid: number;
  cpu: CpuTarget[];
  check(body: UploadBody, expectedSha: string, answer: UploadTiming): string | null;
}

interface UploadRecord {
  sessionId: string;
  status: number;
  startMs: number;
  /** Last body byte handed to the socket. */
  sentMs: number;
  /** Answer complete. */
  doneMs: number;
  /** From the last byte sent to the answer: what the server does after the body (fsync, commit ...). */
  tailMs: number;
  mbPerS: number;
}

interface Phase {
  side: Side;
  round: number;
  warmup: boolean;
  uploads: number;
  bytes: number;
  wallMs: number;
  /** Request-body bytes of all uploads over the phase's wall time, MB/s (10^6 bytes). */
  mbPerS: number;
  medianLatencyMs: number;
  medianTailMs: number;
  maxTailMs: number;
  rss: RssWindow;
  /** % of one core over the phase (`server`, portal: `postgres`, `loadgen`, `other`, `machine`). */
  cpuPercent: Record<string, number | null>;
  /** Server CPU (portal: plus PostgreSQL) per MB received, ms. */
  serverCpuMsPerMB: number;
  /** The server's main (event-loop) thread vs its other threads, % of one core. */
  threads: ThreadCpu;
  settleMs: number;
  machineBusyBeforePercent: number | null;
  waitedForQuietS: number;
  perUpload: UploadRecord[];
}

function log(message: string): void {
  console.log(message);
}

const mib = (kib: number): number => round(kib / 1024, 1);

/** Reject when `signal` aborts, so a hung step cannot outlive the hard timeout. */
function bounded<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err as Error);
      },
    );
  });
}

async function startSink(
  opts: UploadOptions,
  profileDir: string | null,
  signal: AbortSignal,
): Promise<{ url: string; port: number; dir: string; child: NodeChild }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-sink-'));
  fs.chmodSync(dir, 0o755);
  onCleanup(
    `remove ${dir}`,
    () => fs.promises.rm(dir, { recursive: true, force: true }),
    () => fs.rmSync(dir, { recursive: true, force: true }),
  );
  const port = await freePort(HOST);
  const config: SinkConfig = { host: HOST, port, dir };
  const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'] ?? '', BENCH_UPLOAD_SINK_CONFIG: JSON.stringify(config) };
  if (process.env['NODE_OPTIONS'] !== undefined) env['NODE_OPTIONS'] = process.env['NODE_OPTIONS'];
  const script = fileURLToPath(new URL('./upload/sink-server.ts', import.meta.url));
  const child = spawnNode(script, {
    name: 'baseline',
    env,
    echo: opts.verbose,
    nodeArgs: [...opts.nodeArgs, ...(profileDir === null ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`])],
  });
  const url = `http://${HOST}:${port}`;
  await waitForHttp(`${url}/health`, { timeoutMs: 15_000, child, signal });
  return { url, port, dir, child };
}

function portalCheck(body: UploadBody, _sha: string, a: UploadTiming): string | null {
  if (a.status !== 200) return `HTTP ${a.status}: ${a.answer.slice(0, 300)}`;
  try {
    const j = JSON.parse(a.answer) as { success?: unknown; session_id?: unknown };
    if (j.success !== true || j.session_id !== body.sessionId) return `unexpected answer: ${a.answer.slice(0, 300)}`;
  } catch {
    return `not JSON: ${a.answer.slice(0, 200)}`;
  }
  return null;
}

function sinkCheck(body: UploadBody, sha: string, a: UploadTiming): string | null {
  if (a.status !== 200) return `HTTP ${a.status}: ${a.answer.slice(0, 300)}`;
  try {
    const j = JSON.parse(a.answer) as Partial<SinkAnswer>;
    if (j.bytes !== body.length || j.sha256 !== sha)
      return `the baseline received other bytes: ${a.answer.slice(0, 300)} (expected ${body.length} bytes, ${sha})`;
  } catch {
    return `not JSON: ${a.answer.slice(0, 200)}`;
  }
  return null;
}

async function runPhase(
  target: SideTarget,
  roundNo: number,
  warmup: boolean,
  payload: Buffer,
  boundary: string,
  opts: UploadOptions,
  signal: AbortSignal,
): Promise<Phase> {
  // Bodies and their digests first (not timed): fresh session ids, same length.
  const bodies = Array.from({ length: opts.concurrency }, () => buildBody(newSessionId(), payload, boundary));
  const shas = target.side === 'portal' ? bodies.map(() => '') : bodies.map(sha256Of);

  // Settle: no dirty pages of an earlier phase, then an idle machine.
  const s0 = performance.now();
  if (opts.sync) execFileSync('sync', { timeout: 120_000 });
  await sleep(300, undefined, { signal });
  const settleMs = Math.round(performance.now() - s0);
  let quiet: { busyPercent: number | null; waitedMs: number } = { busyPercent: null, waitedMs: 0 };
  if (opts.quietWaitS > 0) {
    quiet = await waitForQuietMachine({
      maxBusyPercent: opts.quietBusyPercent,
      timeoutMs: opts.quietWaitS * 1000,
      signal,
    });
    if (quiet.busyPercent !== null && quiet.busyPercent > opts.quietBusyPercent) {
      log(
        `  (the machine is still busy: ${quiet.busyPercent}% of a core used by others after ${Math.round(quiet.waitedMs / 1000)} s; running anyway)`,
      );
    }
  }

  const rss = startRssSampler(target.pid, opts.sampleMs);
  const cpu = startCpuSample(target.cpu);
  const threadCpu = startThreadCpu(target.pid);
  const t0 = performance.now();
  const settled = await Promise.allSettled(bodies.map((b) => upload(target.upload, b, t0, signal)));
  const wallMs = performance.now() - t0;
  const cpuPercent = cpu.stop();
  const threads = threadCpu.stop();
  const window = rss.stop();
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed)
    throw new Error(
      `${target.side} round ${roundNo}: an upload failed: ${failed.reason instanceof Error ? failed.reason.message : String(failed.reason)}`,
    );
  const answers = settled.map((r) => (r as PromiseFulfilledResult<UploadTiming>).value);
  const problems = answers
    .map((a, i) => target.check(bodies[i] as UploadBody, shas[i] ?? '', a))
    .filter((p): p is string => p !== null);
  if (problems.length > 0)
    throw new Error(
      `${target.side} round ${roundNo}: ${problems.length} of ${answers.length} uploads failed: ${problems[0]}`,
    );

  const bytes = bodies.reduce((a, b) => a + b.length, 0);
  const perUpload: UploadRecord[] = answers.map((a, i) => ({
    sessionId: (bodies[i] as UploadBody).sessionId,
    status: a.status,
    startMs: round(a.startMs, 1),
    sentMs: round(a.sentMs, 1),
    doneMs: round(a.doneMs, 1),
    tailMs: round(a.doneMs - a.sentMs, 1),
    mbPerS: round((bodies[i] as UploadBody).length / MB / ((a.doneMs - a.startMs) / 1000), 1),
  }));
  const serverCpu = (cpuPercent['server'] ?? Number.NaN) + (cpuPercent['postgres'] ?? 0);
  return {
    side: target.side,
    round: roundNo,
    warmup,
    uploads: bodies.length,
    bytes,
    wallMs: round(wallMs, 1),
    mbPerS: round(bytes / MB / (wallMs / 1000), 1),
    medianLatencyMs: round(median(perUpload.map((u) => u.doneMs - u.startMs)), 1),
    medianTailMs: round(median(perUpload.map((u) => u.tailMs)), 1),
    maxTailMs: round(Math.max(...perUpload.map((u) => u.tailMs)), 1),
    rss: window,
    cpuPercent,
    serverCpuMsPerMB: round(((serverCpu / 100) * wallMs) / (bytes / MB), 2),
    threads,
    settleMs,
    machineBusyBeforePercent: quiet.busyPercent,
    waitedForQuietS: round(quiet.waitedMs / 1000, 1),
    perUpload,
  };
}

interface SideSummary {
  phases: number;
  medianMBps: number;
  /** Phases during which the rest of the machine stayed at or below --quiet-busy. */
  uncontendedPhases: number;
  /** Median MB/s of those phases; null when fewer than 2 (then the headline uses every phase). */
  uncontendedMedianMBps: number | null;
  minMBps: number;
  maxMBps: number;
  medianLatencyMs: number;
  medianTailMs: number;
  medianServerCpuMsPerMB: number;
  medianMainThreadPercent: number;
  rssBeforeMiB: number;
  rssPeakMiB: number;
  rssGrowthMedianMiB: number;
  rssGrowthMaxMiB: number;
}

function summarize(phases: Phase[], quietBusyPercent: number): SideSummary | null {
  if (phases.length === 0) return null;
  const maxGrowth = phases.reduce((a, p) => (p.rss.growthKiB > a.rss.growthKiB ? p : a));
  const quiet = phases.filter(
    (p) =>
      p.cpuPercent['other'] !== null &&
      p.cpuPercent['other'] !== undefined &&
      p.cpuPercent['other'] <= quietBusyPercent,
  );
  return {
    phases: phases.length,
    medianMBps: round(median(phases.map((p) => p.mbPerS)), 1),
    uncontendedPhases: quiet.length,
    uncontendedMedianMBps: quiet.length >= 2 ? round(median(quiet.map((p) => p.mbPerS)), 1) : null,
    minMBps: Math.min(...phases.map((p) => p.mbPerS)),
    maxMBps: Math.max(...phases.map((p) => p.mbPerS)),
    medianLatencyMs: round(median(phases.map((p) => p.medianLatencyMs)), 1),
    medianTailMs: round(median(phases.map((p) => p.medianTailMs)), 1),
    medianServerCpuMsPerMB: round(median(phases.map((p) => p.serverCpuMsPerMB)), 2),
    medianMainThreadPercent: round(median(phases.map((p) => p.threads.mainPercent ?? Number.NaN)), 1),
    // The phase with the largest growth: its own before and peak.
    rssBeforeMiB: mib(maxGrowth.rss.beforeKiB),
    rssPeakMiB: mib(maxGrowth.rss.peakKiB),
    rssGrowthMedianMiB: mib(median(phases.map((p) => p.rss.growthKiB))),
    rssGrowthMaxMiB: mib(maxGrowth.rss.growthKiB),
  };
}

/** Every stored object of the portal that has the payload's size, and whether one of them is byte-identical. */
function storedCheck(
  portal: PortalProcess,
  payload: Buffer,
): { objectsOfPayloadSize: number; sampleIdentical: boolean | null } {
  const root = path.join(portal.dataDir, 'blobs', 'objects');
  let count = 0;
  let sample: string | null = null;
  for (const entry of fs.readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    if (fs.statSync(file).size === payload.length) {
      count++;
      sample ??= file;
    }
  }
  return {
    objectsOfPayloadSize: count,
    sampleIdentical: sample === null ? null : fs.readFileSync(sample).equals(payload),
  };
}

async function run(opts: UploadOptions, signal: AbortSignal): Promise<void> {
  const started = new Date();
  const machine = machineInfo();
  const loadAtStart = os.loadavg().map((v) => round(v, 2));
  if (opts.bodyBytes > UPLOAD_LIMIT_BYTES) throw new OptionsError(`--body-bytes must be at most ${UPLOAD_LIMIT_BYTES}`);
  const boundary = `----svc-bench-${randomBytes(12).toString('hex')}`;
  const framing = framingBytes(boundary);
  if (opts.bodyBytes <= framing)
    throw new OptionsError(`--body-bytes must exceed the framing and JSON (${framing} bytes)`);
  const payload = logPayload(opts.bodyBytes - framing);
  const probe = buildBody(newSessionId(), payload, boundary);
  if (probe.length !== opts.bodyBytes) throw new Error(`body is ${probe.length} bytes, wanted ${opts.bodyBytes}`);
  const bytesInFlight = opts.concurrency * probe.length;
  const jsonInFlight = opts.concurrency * probe.jsonBytes;

  log(
    `upload benchmark: POST /api/upload, ${opts.concurrency} concurrent uploads of ${probe.length} bytes (${(probe.length / MiB).toFixed(2)} MiB: ` +
      `session_json ${probe.jsonBytes} B + pipeline_log ${payload.length} B + ${framing - probe.jsonBytes} B framing), ` +
      `${opts.warmupRounds} warm-up + ${opts.rounds} measured round(s), hard timeout ${opts.timeoutS} s`,
  );
  log(
    `machine: ${machine.cpus} CPUs (${machine.cpuModel}), Node ${machine.node}, ${machine.platform}, load average ${loadAtStart.join(' ')}`,
  );

  const profileDir = path.join(RESULTS_DIR, `upload-${stampOf(started)}-profile`);
  if (opts.profile)
    log(
      `profiling the portal and the baseline into ${profileDir}: the figures are slowed by the profiler, do not report them`,
    );
  log('starting the portal (embedded PostgreSQL in a fresh temp dir) ...');
  const t0 = Date.now();
  const apiKey = randomBytes(24).toString('base64url'); // 32 characters: the legacy upload key
  const portal = await bounded(
    startPortalProcess({
      echo: opts.verbose,
      // One key for every upload: let it have them all in progress at once.
      env: { SVC_UPLOAD_API_KEY: apiKey, SVC_UPLOADS_PER_KEY: String(Math.max(8, opts.concurrency)) },
      nodeArgs: [
        ...opts.nodeArgs,
        ...(opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${path.join(profileDir, 'portal')}`] : []),
      ],
    }),
    signal,
  );
  log(
    `portal up at ${portal.url} (pid ${portal.child.pid}, PostgreSQL on port ${portal.pgPort}, data in ${portal.dataDir}) in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
  );
  const sink = await startSink(opts, opts.profile ? path.join(profileDir, 'baseline') : null, signal);
  log(`baseline up at ${sink.url} (pid ${sink.child.pid}, files in ${sink.dir})`);

  const agents: http.Agent[] = [];
  const agent = (): http.Agent => {
    const a = new http.Agent({ keepAlive: true, maxSockets: opts.concurrency });
    agents.push(a);
    return a;
  };
  onCleanup('close HTTP agents', () => {
    for (const a of agents) a.destroy();
  });
  const headers = { 'x-api-key': apiKey };
  const portalPort = portal.port;
  const postgres: CpuTarget = { name: 'postgres', pid: () => portal.postmasterPid(), withChildren: true };
  const targets: SideTarget[] = [
    {
      side: 'baseline',
      pid: sink.child.pid,
      upload: { host: HOST, port: sink.port, path: '/api/upload', headers, agent: agent() },
      cpu: [{ name: 'server', pid: () => sink.child.pid }],
      check: sinkCheck,
    },
    {
      side: 'portal',
      pid: portal.child.pid,
      upload: { host: HOST, port: portalPort, path: '/api/upload', headers, agent: agent() },
      cpu: [{ name: 'server', pid: () => portal.child.pid }, postgres],
      check: portalCheck,
    },
  ];
  if (opts.fsyncBaseline) {
    targets.push({
      side: 'baseline+fsync',
      pid: sink.child.pid,
      upload: { host: HOST, port: sink.port, path: '/api/upload-fsync', headers, agent: agent() },
      cpu: [{ name: 'server', pid: () => sink.child.pid }],
      check: sinkCheck,
    });
  }

  const idle = {
    portalKiB: readMem(portal.child.pid)?.rssKiB ?? Number.NaN,
    baselineKiB: readMem(sink.child.pid)?.rssKiB ?? Number.NaN,
  };
  log(`idle RSS before any upload: portal ${mib(idle.portalKiB)} MiB, baseline ${mib(idle.baselineKiB)} MiB`);

  const phases: Phase[] = [];
  const rows: (string | number)[][] = [
    [
      'phase',
      'MB/s',
      'wall s',
      'upload s (p50)',
      'tail ms (max)',
      'server CPU',
      'main thread',
      'postgres CPU',
      'other CPU',
      'CPU ms/MB',
      'RSS before MiB',
      'RSS peak MiB',
      'growth MiB',
    ],
  ];
  const cpuCell = (v: number | null | undefined): string => (v === null || v === undefined ? '-' : `${v.toFixed(0)}%`);
  const total = opts.warmupRounds + opts.rounds;
  for (let i = 1; i <= total; i++) {
    const warmup = i <= opts.warmupRounds;
    const roundNo = warmup ? 0 : i - opts.warmupRounds;
    for (const target of targets) {
      const label = warmup
        ? `${target.side} warm-up${opts.warmupRounds > 1 ? ` ${i}` : ''}`
        : `${target.side} #${roundNo}`;
      const p = await runPhase(target, roundNo, warmup, payload, boundary, opts, signal);
      phases.push(p);
      log(
        `  ${label.padEnd(22)} ${p.mbPerS.toFixed(1).padStart(7)} MB/s  ${(p.wallMs / 1000).toFixed(2)} s  tail p50 ${p.medianTailMs.toFixed(0)} ms  ` +
          `CPU server ${cpuCell(p.cpuPercent['server'])} (main thread ${cpuCell(p.threads.mainPercent)})${target.side === 'portal' ? ` postgres ${cpuCell(p.cpuPercent['postgres'])}` : ''} other ${cpuCell(p.cpuPercent['other'])}  ` +
          `RSS ${mib(p.rss.beforeKiB)} -> ${mib(p.rss.peakKiB)} MiB (+${mib(p.rss.growthKiB)}; ${p.rss.samples} samples, max gap ${p.rss.maxGapMs} ms)`,
      );
      rows.push([
        label,
        p.mbPerS.toFixed(1),
        (p.wallMs / 1000).toFixed(2),
        (p.medianLatencyMs / 1000).toFixed(2),
        p.maxTailMs.toFixed(0),
        cpuCell(p.cpuPercent['server']),
        cpuCell(p.threads.mainPercent),
        target.side === 'portal' ? cpuCell(p.cpuPercent['postgres']) : '-',
        cpuCell(p.cpuPercent['other']),
        p.serverCpuMsPerMB.toFixed(2),
        mib(p.rss.beforeKiB).toFixed(1),
        mib(p.rss.peakKiB).toFixed(1),
        mib(p.rss.growthKiB).toFixed(1),
      ]);
    }
  }

  const measured = (side: Side): Phase[] => phases.filter((p) => p.side === side && !p.warmup);
  const baseline = summarize(measured('baseline'), opts.quietBusyPercent);
  const portalSummary = summarize(measured('portal'), opts.quietBusyPercent);
  const baselineFsync = summarize(measured('baseline+fsync'), opts.quietBusyPercent);
  if (baseline === null || portalSummary === null) throw new Error('no measured phases');
  // Other work on the machine slows whichever phase it lands on: when each side has at
  // least 2 phases that ran alone, the headline compares those; otherwise every phase.
  const headlineBasis: 'uncontended phases' | 'all phases' =
    baseline.uncontendedMedianMBps !== null &&
    portalSummary.uncontendedMedianMBps !== null &&
    (baselineFsync === null || baselineFsync.uncontendedMedianMBps !== null)
      ? 'uncontended phases'
      : 'all phases';
  const headline = (s: SideSummary): number =>
    headlineBasis === 'uncontended phases' ? (s.uncontendedMedianMBps ?? s.medianMBps) : s.medianMBps;
  const ratio = round(headline(portalSummary) / headline(baseline), 3);
  const ratioAllPhases = round(portalSummary.medianMBps / baseline.medianMBps, 3);
  const ratioFsync = baselineFsync === null ? null : round(headline(portalSummary) / headline(baselineFsync), 3);
  const cpuRatio = round(portalSummary.medianServerCpuMsPerMB / baseline.medianServerCpuMsPerMB, 2);
  const jsonMiB = jsonInFlight / MiB;
  // Steady state: growth within each measured round (first-touch costs were paid in the warm-up).
  const allowedGrowthMiB = round(jsonMiB + opts.rssAllowanceMiB, 3);
  // Whole run, warm-up included: the highest peak over the idle RSS, against what the bare
  // node:http baseline needed to stream the same uploads (its own first-touch growth).
  const portalPhases = phases.filter((p) => p.side === 'portal');
  const sinkPhases = phases.filter((p) => p.side !== 'portal');
  const portalRunPeakKiB = Math.max(...portalPhases.map((p) => p.rss.peakKiB));
  const sinkRunPeakKiB = Math.max(...sinkPhases.map((p) => p.rss.peakKiB));
  const portalRunGrowthMiB = mib(portalRunPeakKiB - idle.portalKiB);
  const baselineRunGrowthMiB = mib(sinkRunPeakKiB - idle.baselineKiB);
  const allowedRunGrowthMiB = round(jsonMiB + baselineRunGrowthMiB + opts.rssAllowanceMiB, 1);
  const goals = {
    throughput: {
      goal: 'portal / baseline >= 0.6 (median MB/s)',
      basis: headlineBasis,
      ratio,
      ratioAllPhases,
      met: ratio >= 0.6,
    },
    memorySteady: {
      goal: `portal RSS growth within a measured round <= JSON in flight (${jsonInFlight} B) + ${opts.rssAllowanceMiB} MiB`,
      allowedGrowthMiB,
      measuredMaxGrowthMiB: portalSummary.rssGrowthMaxMiB,
      met: portalSummary.rssGrowthMaxMiB <= allowedGrowthMiB,
    },
    memoryRun: {
      goal: `portal RSS peak over its idle RSS (whole run) <= JSON in flight + the baseline's own growth + ${opts.rssAllowanceMiB} MiB`,
      allowedGrowthMiB: allowedRunGrowthMiB,
      measuredGrowthMiB: portalRunGrowthMiB,
      baselineGrowthMiB: baselineRunGrowthMiB,
      met: portalRunGrowthMiB <= allowedRunGrowthMiB,
    },
  };

  const stored = storedCheck(portal, payload);
  const portalUploads = portalPhases.reduce((a, p) => a + p.uploads, 0);
  if (stored.objectsOfPayloadSize !== portalUploads || stored.sampleIdentical !== true) {
    log(
      `warning: the portal's blob store holds ${stored.objectsOfPayloadSize} objects of the pipeline_log's size for ${portalUploads} uploads (sample identical: ${stored.sampleIdentical})`,
    );
  }

  const summaryRows: (string | number)[][] = [
    [
      'median of measured rounds',
      'MB/s',
      'MB/s alone (n)',
      'min',
      'max',
      'upload s',
      'tail ms',
      'CPU ms/MB',
      'main thread',
      'RSS before MiB',
      'RSS peak MiB',
      'growth max MiB',
      'growth p50 MiB',
    ],
  ];
  const addRow = (name: string, s: SideSummary | null): void => {
    if (s === null) return;
    summaryRows.push([
      name,
      s.medianMBps.toFixed(1),
      `${s.uncontendedMedianMBps === null ? '-' : s.uncontendedMedianMBps.toFixed(1)} (${s.uncontendedPhases})`,
      s.minMBps.toFixed(1),
      s.maxMBps.toFixed(1),
      (s.medianLatencyMs / 1000).toFixed(2),
      s.medianTailMs.toFixed(0),
      s.medianServerCpuMsPerMB.toFixed(2),
      `${s.medianMainThreadPercent.toFixed(0)}%`,
      s.rssBeforeMiB.toFixed(1),
      s.rssPeakMiB.toFixed(1),
      s.rssGrowthMaxMiB.toFixed(1),
      s.rssGrowthMedianMiB.toFixed(1),
    ]);
  };
  addRow('baseline (node:http -> file + SHA-256)', baseline);
  addRow('portal', portalSummary);
  addRow('baseline+fsync (informational)', baselineFsync);
  summaryRows.push([
    'portal / baseline',
    ratioAllPhases.toFixed(3),
    headlineBasis === 'uncontended phases' ? ratio.toFixed(3) : '-',
    '',
    '',
    '',
    '',
    `${cpuRatio.toFixed(2)}x`,
  ]);
  if (ratioFsync !== null && baselineFsync !== null)
    summaryRows.push([
      'portal / baseline+fsync',
      round(portalSummary.medianMBps / baselineFsync.medianMBps, 3).toFixed(3),
      headlineBasis === 'uncontended phases' ? ratioFsync.toFixed(3) : '-',
    ]);

  log('');
  log(
    `MB = 10^6 bytes; CPU in % of one core (the machine has ${machine.cpus}); "tail" = last body byte sent -> answer received; RSS from /proc/<pid>/status (VmRSS sampled every ${opts.sampleMs} ms, plus VmHWM reset before each phase).`,
  );
  log(table(rows));
  log('');
  log(table(summaryRows));
  log('');
  log(
    `bytes in flight per phase: ${opts.concurrency} x ${probe.length} = ${bytesInFlight} B (${(bytesInFlight / MiB).toFixed(1)} MiB); JSON in flight: ${jsonInFlight} B`,
  );
  log(
    `RSS over the whole run (warm-up included): portal idle ${mib(idle.portalKiB)} MiB -> peak ${mib(portalRunPeakKiB)} MiB (+${portalRunGrowthMiB} MiB); ` +
      `baseline idle ${mib(idle.baselineKiB)} MiB -> peak ${mib(sinkRunPeakKiB)} MiB (+${baselineRunGrowthMiB} MiB)`,
  );
  const verdict = (met: boolean): string => (met ? 'met' : 'MISSED');
  log(
    `throughput goal (portal/baseline >= 0.6, medians of ${headlineBasis}): ${headline(portalSummary).toFixed(1)} / ${headline(baseline).toFixed(1)} MB/s = ${ratio.toFixed(3)} -> ${verdict(goals.throughput.met)}` +
      `   (server CPU per MB: portal ${cpuRatio.toFixed(2)}x the baseline's${ratioFsync !== null ? `; portal / baseline+fsync ${ratioFsync.toFixed(3)}` : ''})`,
  );
  log(
    `memory goal, steady state (growth within a round <= JSON in flight + ${opts.rssAllowanceMiB} MiB = ${allowedGrowthMiB.toFixed(1)} MiB): ` +
      `portal max ${portalSummary.rssGrowthMaxMiB.toFixed(1)} MiB (baseline ${baseline.rssGrowthMaxMiB.toFixed(1)} MiB) -> ${verdict(goals.memorySteady.met)}`,
  );
  log(
    `memory goal, whole run (peak - idle <= JSON in flight + baseline's ${baselineRunGrowthMiB} MiB + ${opts.rssAllowanceMiB} MiB = ${allowedRunGrowthMiB.toFixed(1)} MiB): ` +
      `portal +${portalRunGrowthMiB} MiB -> ${verdict(goals.memoryRun.met)}`,
  );
  log(
    `stored: ${stored.objectsOfPayloadSize} pipeline_log objects for ${portalUploads} portal uploads, sample byte-identical: ${stored.sampleIdentical}`,
  );
  const contended = phases.filter((p) => !p.warmup && (p.cpuPercent['other'] ?? 0) > opts.quietBusyPercent);
  if (contended.length > 0) {
    log(
      `warning: ${contended.length} measured phases shared the machine with other work (other CPU > ${opts.quietBusyPercent}% of a core); their figures are less reliable.`,
    );
  }

  const profiles: Record<string, unknown> = {};
  if (opts.profile) {
    // The profiles are written when the processes exit.
    await portal.stop();
    await sink.child.stop(10_000);
    for (const who of ['portal', 'baseline'] as const) {
      const dir = path.join(profileDir, who);
      const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')) : [];
      for (const f of files) {
        const s = summarizeProfile(
          JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as Parameters<typeof summarizeProfile>[0],
        );
        const busy = s.totalMs - (s.byArea.find(([a]) => a === '(idle)')?.[1] ?? 0);
        const pct = (ms: number): string => `${((ms / busy) * 100).toFixed(1)}%`;
        log(
          `\n${who} CPU profile ${path.join(dir, f)}: ${(busy / 1000).toFixed(2)} s busy on the main thread (start-up included)`,
        );
        log('self time by area:');
        for (const [a, ms] of s.byArea.filter(([a]) => a !== '(idle)').slice(0, 12))
          log(`  ${pct(ms).padStart(6)}  ${(ms / 1000).toFixed(2).padStart(6)} s  ${a}`);
        log('self time by function:');
        for (const [fn, ms] of s.bySelf.filter(([fn]) => !fn.startsWith('(idle)')).slice(0, 15))
          log(`  ${pct(ms).padStart(6)}  ${(ms / 1000).toFixed(2).padStart(6)} s  ${fn}`);
        profiles[who] = {
          file: path.join(dir, f),
          busyMs: round(busy, 0),
          byArea: s.byArea.slice(0, 20),
          byTotal: s.byTotal.slice(0, 40),
          bySelf: s.bySelf.slice(0, 40),
        };
      }
    }
  }

  const file = writeResult(
    'upload',
    {
      benchmark: 'upload',
      description: `${opts.concurrency} concurrent POST /api/upload of ${probe.length} bytes each: the portal vs a bare node:http server streaming the body to a file with SHA-256 (and, informational, the same plus fsync)`,
      startedAt: started.toISOString(),
      finishedAt: new Date().toISOString(),
      profiled: opts.profile,
      machine,
      loadAverage: { atStart: loadAtStart, atEnd: os.loadavg().map((v) => round(v, 2)) },
      options: opts,
      body: {
        bytes: probe.length,
        limitBytes: UPLOAD_LIMIT_BYTES,
        sessionJsonBytes: probe.jsonBytes,
        pipelineLogBytes: payload.length,
        framingBytes: framing - probe.jsonBytes,
        concurrency: opts.concurrency,
        bytesInFlight,
        jsonBytesInFlight: jsonInFlight,
      },
      idleRssMiB: { portal: mib(idle.portalKiB), baseline: mib(idle.baselineKiB) },
      runPeakRssMiB: { portal: mib(portalRunPeakKiB), baseline: mib(sinkRunPeakKiB) },
      summary: {
        baseline,
        portal: portalSummary,
        baselineFsync,
        ratio,
        ratioBasis: headlineBasis,
        ratioAllPhases,
        ratioToFsyncBaseline: ratioFsync,
        serverCpuPerMBRatio: cpuRatio,
        goals,
      },
      stored,
      profiles,
      phases,
    },
    started,
  );
  log(`result written to ${file}`);
}

async function main(): Promise<number> {
  let opts: UploadOptions | 'help';
  try {
    opts = parseUploadOptions();
  } catch (err) {
    console.error(err instanceof OptionsError || err instanceof TypeError ? err.message : err);
    console.error(usage());
    return 2;
  }
  if (opts === 'help') {
    console.log(usage());
    return 0;
  }
  installSignalHandlers();
  const deadline = AbortSignal.timeout(opts.timeoutS * 1000);
  const signal = AbortSignal.any([interrupted, deadline]);
  // Last resort if even the cleanup hangs: the 'exit' handler kills the children and removes the temp dirs.
  setTimeout(
    () => {
      console.error(`hard timeout: still running ${opts.timeoutS + 120} s after the start; forcing exit`);
      process.exit(1);
    },
    (opts.timeoutS + 120) * 1000,
  ).unref();
  try {
    await (opts.findings.length > 0 ? runFindings(opts, signal) : run(opts, signal));
    return 0;
  } catch (err) {
    if (interrupted.aborted) return 130;
    if (deadline.aborted)
      console.error(`\nbenchmark stopped: the hard timeout of ${opts.timeoutS} s passed (--timeout)`);
    else console.error('\nbenchmark failed:', err instanceof Error ? err.message : err);
    return 1;
  } finally {
    log('cleaning up (stopping the portal, PostgreSQL and the baseline; removing the temp dirs) ...');
    const t = Date.now();
    await cleanupAll();
    log(`cleaned up in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  }
}

process.exitCode = await main();
