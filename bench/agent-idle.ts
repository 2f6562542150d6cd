/**
 * Benchmark: what an idle svcd costs its host. A real svcd (packages/agent/bin/svcd, the
 * same process a systemd unit starts) heartbeats to a real portal process with no commands and
 * no schedule due; this samples the daemon's resident memory (VmRSS) and CPU time
 * (/proc/<pid>/stat utime + stime) every second after a warm-up, and reports:
 * - RSS: median and maximum over the window;
 * - CPU, whole window: share of one core, heartbeats included;
 * - CPU between heartbeats: the same over the seconds in which no heartbeat was sent (the
 *   daemon logs each one at debug level; a second with a heartbeat, and the one after it,
 *   are left out).
 * Goal: under 60 MB RSS and under 0.1 % CPU between heartbeats.
 * Baseline, sampled in the same seconds: the same node binary with the same memory flags running
 * nothing but an idle timer, Node's own floor; the ratio says what the daemon adds to it.
 *
 *   node bench/agent-idle.ts [--duration=120] [--warmup=20] [--interval=30]
 *
 * Results: bench/results/agent-idle-<timestamp>.json.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { cleanupAll, installSignalHandlers, interrupted, onCleanup } from './lib/cleanup.ts';
import { machineInfo } from './lib/machine.ts';
import { adminToken, createLicense, REPO_ROOT, startPortalProcess } from './lib/portal.ts';
import { table, writeResult } from './lib/report.ts';
import { median, round } from './lib/stats.ts';
import { cpuTicks, heartbeatTimes, IDLE_RSS_MB_BELOW, rssMb, TICKS_PER_S } from '@svc/test-support/proc-stats';

const SVCD = path.join(REPO_ROOT, 'packages/agent/bin/svcd');
function options() {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '120' },
      warmup: { type: 'string', default: '20' },
      interval: { type: 'string', default: '30' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log('node bench/agent-idle.ts [--duration=120] [--warmup=20] [--interval=30]');
    process.exit(0);
  }
  const n = (k: 'duration' | 'warmup' | 'interval') => {
    const v = Number(values[k]);
    if (!Number.isInteger(v) || v < 0) throw new Error(`--${k} must be a whole number of seconds`);
    return v;
  };
  return { durationS: n('duration'), warmupS: n('warmup'), intervalS: Math.max(1, n('interval')) };
}

async function main(): Promise<void> {
  const opts = options();
  installSignalHandlers();
  const portal = await startPortalProcess({ logLevel: 'warn' });
  onCleanup('stop the portal', () => portal.stop());
  const token = await adminToken(portal);
  const key = await createLicense(portal, token, { tier: 'business', client_id: 'bench-idle', name: 'agent idle' });

  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'svcd-bench-'));
  onCleanup(`remove ${home}`, () => fs.promises.rm(home, { recursive: true, force: true }));
  const configs = path.join(home, 'configs');
  fs.mkdirSync(configs, { mode: 0o700 });
  fs.writeFileSync(
    path.join(configs, 'portal.conf'),
    [
      `CONSULTATION_API_URL=${portal.url}/api/upload`,
      `SVC_API_KEY=${key}`,
      `DAEMON_HEARTBEAT_INTERVAL=${opts.intervalS}`,
      'DAEMON_LOG_LEVEL=debug',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  // A schedule that is loaded but not due: its cron job is part of the idle cost.
  fs.writeFileSync(path.join(configs, 'weekly.conf'), 'SCAN_TARGETS=127.0.0.1\nSCAN_CRON=0 3 1 1 *\n', { mode: 0o600 });

  const env = {
    PATH: process.env['PATH'],
    HOME: home,
    SVC_AGENT_ID: 'svcd_bench-idle',
    SVC_AGENT_STATE_DIR: path.join(home, 'state'),
  };
  // As on a host after its first start: the compile cache (bin/svcd sets it) is warm.
  execFileSync(SVCD, ['--help'], { env, stdio: 'ignore' });
  const child = spawn(SVCD, ['--config-dir', configs], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  onCleanup('stop svcd', async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('close', r));
    }
  });
  // The baseline: Node itself, idle, with the flags bin/svcd gives the bundle.
  const nodeBin = path.join(REPO_ROOT, 'node_modules/.bin/node');
  const bare = spawn(nodeBin, ['--max-semi-space-size=1', '--lite-mode', '-e', 'setInterval(() => {}, 1e9)'], {
    stdio: 'ignore',
  });
  onCleanup('stop the baseline node', async () => {
    if (bare.exitCode === null) {
      bare.kill('SIGTERM');
      await new Promise((r) => bare.once('close', r));
    }
  });
  const beats: number[] = [];
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    beats.push(...heartbeatTimes(chunk));
  });
  const pid = child.pid as number;

  console.log(
    `svcd pid ${pid}: warm-up ${opts.warmupS} s, then ${opts.durationS} s measured (heartbeat every ${opts.intervalS} s)`,
  );
  await sleep(opts.warmupS * 1000, undefined, { signal: interrupted });
  const samples: { at: number; ticks: number; rss: number; bareRss: number }[] = [];
  for (let i = 0; i <= opts.durationS; i++) {
    samples.push({ at: Date.now(), ticks: cpuTicks(pid), rss: rssMb(pid), bareRss: rssMb(bare.pid as number) });
    if (i < opts.durationS) await sleep(1000, undefined, { signal: interrupted });
  }

  const first = samples[0] as (typeof samples)[number];
  const last = samples.at(-1) as (typeof samples)[number];
  const wholeS = (last.at - first.at) / 1000;
  const wholePct = ((last.ticks - first.ticks) / TICKS_PER_S / wholeS) * 100;
  let quietTicks = 0;
  let quietS = 0;
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1] as (typeof samples)[number];
    const b = samples[i] as (typeof samples)[number];
    if (beats.some((t) => t >= a.at - 1000 && t <= b.at)) continue;
    quietTicks += b.ticks - a.ticks;
    quietS += (b.at - a.at) / 1000;
  }
  const quietPct = quietS === 0 ? null : (quietTicks / TICKS_PER_S / quietS) * 100;
  const rss = samples.map((s) => s.rss);
  const bareRss = median(samples.map((s) => s.bareRss));
  const measuredBeats = beats.filter((t) => t >= first.at && t <= last.at).length;
  const result = {
    machine: machineInfo(),
    options: opts,
    heartbeats_in_window: measuredBeats,
    rss_mb: { median: round(median(rss), 1), max: round(Math.max(...rss), 1) },
    baseline_bare_node_rss_mb: round(bareRss, 1),
    rss_ratio_to_bare_node: round(median(rss) / bareRss, 2),
    cpu_percent_whole_window: round(wholePct, 3),
    cpu_percent_between_heartbeats: quietPct === null ? null : round(quietPct, 3),
    quiet_seconds: round(quietS, 0),
    goal: { rss_mb_below: IDLE_RSS_MB_BELOW, cpu_percent_below: 0.1 },
  };
  console.log(
    table([
      ['measure', 'value', 'goal'],
      ['RSS median (MB)', result.rss_mb.median, `< ${IDLE_RSS_MB_BELOW}`],
      ['RSS max (MB)', result.rss_mb.max, `< ${IDLE_RSS_MB_BELOW}`],
      ['baseline: bare node idle, RSS median (MB)', result.baseline_bare_node_rss_mb, ''],
      ['RSS ratio svcd / bare node', result.rss_ratio_to_bare_node, ''],
      ['CPU between heartbeats (% of a core)', result.cpu_percent_between_heartbeats ?? 'n/a', '< 0.1'],
      ['CPU whole window (% of a core)', result.cpu_percent_whole_window, ''],
      ['heartbeats in window', measuredBeats, ''],
    ]),
  );
  console.log(`results: ${writeResult('agent-idle', result)}`);
}

try {
  await main();
} finally {
  await cleanupAll();
}
