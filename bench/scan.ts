/**
 * Benchmark: `svc scan` against the bare nmap command of the same profile, on the project's test
 * network (test-support/netlab), in the same run. Alternately, --rounds times: the exact
 * nmap argv runNmap builds for quick_recon (buildNmapArgs: same ports, same targets, as root)
 * inside the scanner namespace, its XML to a file; then `svc scan --json --no-tools` of the same
 * targets and ports inside the same namespace, with a temp sessions dir; then the same scan with
 * the optional tools (testssl.sh, sslscan, whatweb...) that are installed.
 *
 * The pipeline's own overhead is the tools-off run against bare nmap: svc/nmap - 1 against the
 * goal (at most 5 %), and svc's time outside the nmap run it logged. The optional tools do work
 * nmap does not, so they are reported apart: per tool, the seconds its processes ran (from
 * pipeline.log) and that time's share of the tools-on run. Also the pipeline's stage times and
 * Node's start-up alone (`svc --version`, with and without the compile cache). Exits non-zero on
 * errors only; a missed goal is printed as the verdict. Needs root. See bench/README.md.
 *
 *   node bench/scan.ts [--rounds=3] [--skip-tools]
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  buildNmapArgs,
  DEFAULT_NMAP_PATH,
  formatCommand,
  parseNmapXml,
  parseTargets,
  PROFILES,
  writeOwnScripts,
} from '@svc/client/engine';
import { startNetlab } from '@svc/test-support/netlab';
import { PLANTED_PORTS } from '@svc/test-support/netlab/planted';
import { installSignalHandlers, onCleanup, runBenchmark } from './lib/cleanup.ts';
import { machineInfo } from './lib/machine.ts';
import { REPO_ROOT } from './lib/portal.ts';
import { table, writeResult } from './lib/report.ts';
import { median, round } from './lib/stats.ts';
import { type SvcRun, summariseTools, toolTimesOf } from './scan/tools.ts';

const SVC = path.join(REPO_ROOT, 'packages', 'client', 'bin', 'svc');
const PROFILE = 'quick_recon';
/** The goal: the pipeline's overhead is at most 5 % of nmap's time. */
const GOAL_OVERHEAD = 0.05;
const RUN_TIMEOUT_MS = 5 * 60_000;

interface Timed {
  ms: number;
  /** CPU time of the process and everything it waited for. */
  cpuMs: number;
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * CPU time (user + system, ms) of this process's children that have ended and been waited for,
 * with their own waited-for children: fields cutime and cstime of /proc/self/stat.
 */
function childrenCpuMs(): number {
  const stat = fs.readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the name: state is field 3, so cutime (16) and cstime (17) are at 13 and 14 here.
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / CLOCK_TICKS;
}
/** sysconf(_SC_CLK_TCK); 100 on every Linux this runs on. */
const CLOCK_TICKS = 100;

/**
 * Runs a command to its end with a minimal environment: wall time from spawn to exit, and its CPU
 * time (runs are one at a time, so the children's CPU counter moves for this one only).
 */
function timedRun(argv: readonly string[], env: Record<string, string>, stdoutFile?: string): Promise<Timed> {
  const [file = '', ...args] = argv;
  return new Promise((resolve, reject) => {
    const out = stdoutFile === undefined ? 'pipe' : fs.openSync(stdoutFile, 'w');
    const cpu0 = childrenCpuMs();
    const t0 = performance.now();
    const child = spawn(file, args, { env, stdio: ['ignore', out, 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      stderr = (stderr + d).slice(-64 * 1024);
    });
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      reject(new Error(`${formatCommand(argv)} did not finish within ${RUN_TIMEOUT_MS} ms`));
    }, RUN_TIMEOUT_MS);
    child.once('error', reject);
    child.once('exit', () => {
      const ms = performance.now() - t0;
      child.once('close', (code) => {
        clearTimeout(timer);
        if (typeof out === 'number') fs.closeSync(out);
        resolve({ ms, cpuMs: childrenCpuMs() - cpu0, code, stdout, stderr });
      });
    });
  });
}

/** `stage <name> <n> ms` lines of a pipeline.log, plus the `end` line's total as `pipeline total`. */
function stagesOf(log: string): Record<string, number> {
  const stages: Record<string, number> = {};
  for (const line of log.split('\n')) {
    const stage = /^\S+ stage (\S+) (\d+) ms\b/.exec(line);
    if (stage) stages[stage[1] as string] = Number(stage[2]);
    const end = /^\S+ end .*; (\d+) ms$/.exec(line);
    if (end) stages['pipeline total'] = Number(end[1]);
  }
  return stages;
}

interface Round {
  nmapMs: number;
  /** svc scan with the optional tools off: nmap and the pipeline. */
  svcMs: number;
  nmapCpuMs: number;
  /** svc's CPU time, its nmap child's included. */
  svcCpuMs: number;
  /** The nmap time svc logged: its run of nmap alone. */
  svcNmapMs: number;
  stages: Record<string, number>;
  hostsUp: number;
  findings: number;
  /** svc scan with the installed optional tools; absent with --skip-tools. */
  withTools?: SvcRun;
}

const loadavg = () => os.loadavg().map((l) => round(l, 2));
const pct = (x: number) => `${round(x * 100, 2)} %`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    strict: true,
    options: {
      rounds: { type: 'string' },
      'skip-tools': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log('node bench/scan.ts [--rounds=3] [--skip-tools]   (root: uses the test network)');
    return;
  }
  const withTools = values['skip-tools'] !== true;
  const rounds = Number(values.rounds ?? 3);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 10)
    throw new Error('--rounds must be a whole number from 1 to 10');
  const started = new Date();
  const loadBefore = loadavg();
  const lab = await startNetlab();
  // The benchmark's handlers own the signals from here, with the network's stop as a cleanup step:
  // the network's own handler would re-raise the signal, which reads as a second Ctrl-C.
  process.removeAllListeners('SIGINT');
  process.removeAllListeners('SIGTERM');
  installSignalHandlers();
  onCleanup(
    'stop the test network',
    () => lab.stop(),
    () => lab.stop(),
  );
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-scan-'));
  onCleanup(
    `remove ${dir}`,
    () => fs.promises.rm(dir, { recursive: true, force: true }),
    () => fs.rmSync(dir, { recursive: true, force: true }),
  );

  const ips = Object.values(lab.hosts).map((h) => h.ip);
  if (!ips.every((ip) => ip.startsWith('10.231.0.')))
    throw new Error(`refusing to scan ${ips}: outside the test network`);
  // The scanner's own NSE scripts, which svc scan writes out for each run, written once for the bare runs.
  const scripts = await writeOwnScripts(PROFILES[PROFILE].ownScripts);
  onCleanup(`remove ${scripts.dir}`, scripts.remove, scripts.remove);
  const nmapArgv = [
    ...lab.wrapper,
    DEFAULT_NMAP_PATH,
    ...buildNmapArgs(PROFILES[PROFILE], parseTargets(ips, null), {
      privileged: true,
      ports: PLANTED_PORTS,
      scriptDir: scripts.dir,
    }),
  ];
  const svcArgv = (sessions: string, tools: boolean) => [
    ...lab.wrapper,
    SVC,
    'scan',
    '--targets',
    ips.join(','),
    '-P',
    PROFILE,
    '--ports',
    PLANTED_PORTS,
    '--json',
    '--sessions-dir',
    sessions,
    ...(tools ? [] : ['--no-tools']),
  ];
  const env = (home: string) => ({ PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8' });
  console.log(`nmap: ${formatCommand(nmapArgv)}`);
  console.log(`svc:  ${formatCommand(svcArgv('<temp>', false))}`);
  if (withTools) console.log(`svc with the optional tools: ${formatCommand(svcArgv('<temp>', true))}`);
  console.log('');

  // Every svc run shares one HOME, as a user's runs do, so Node's compile cache (bin/svc) is warm
  // after the first. Node's start-up and module load alone: without the cache, the first run
  // (which writes it), and warm runs.
  const home = fs.mkdtempSync(path.join(dir, 'home-'));
  const version = async (extra: Record<string, string> = {}) => {
    const r = await timedRun([SVC, '--version'], { ...env(home), ...extra });
    if (r.code !== 0) throw new Error(`svc --version exited with ${r.code}: ${r.stderr}`);
    return r;
  };
  const uncached: Timed[] = [];
  for (let i = 0; i < 3; i++) uncached.push(await version({ NODE_DISABLE_COMPILE_CACHE: '1' }));
  const first = await version();
  const startup: Timed[] = [];
  for (let i = 0; i < 3; i++) startup.push(await version());
  const show = (rs: Timed[]) =>
    `${round(median(rs.map((r) => r.ms)))} ms (CPU ${round(median(rs.map((r) => r.cpuMs)))} ms)`;
  console.log(
    `svc --version: ${show(uncached)} without the compile cache, ${show([first])} writing it, ` +
      `${show(startup)} warm (medians of 3)\n`,
  );

  const runs: Round[] = [];
  for (let i = 0; i < rounds; i++) {
    const xml = path.join(dir, `nmap-${i}.xml`);
    const nmap = await timedRun(nmapArgv, env(dir), xml);
    if (nmap.code !== 0)
      throw new Error(`nmap exited with ${nmap.code}: ${nmap.stderr.trim().split('\n').slice(-3).join('\n')}`);
    const hostsUp = parseNmapXml(fs.readFileSync(xml, 'utf8')).hosts.filter((h) => h.status.state === 'up').length;

    const svcRun = async (tools: boolean): Promise<SvcRun> => {
      const r = await timedRun(svcArgv(path.join(dir, `sessions-${i}-${tools ? 'tools' : 'bare'}`), tools), env(home));
      if (r.code !== 0) throw new Error(`svc scan exited with ${r.code}: ${r.stderr}`);
      const out = JSON.parse(r.stdout) as { path: string; summary: { total_hosts: number; total_findings: number } };
      const log = fs.readFileSync(path.join(out.path, 'pipeline.log'), 'utf8');
      const stages = stagesOf(log);
      const nmapMs = stages['nmap'];
      if (nmapMs === undefined) throw new Error(`no nmap timing in ${out.path}/pipeline.log`);
      if (out.summary.total_hosts !== hostsUp) {
        throw new Error(`svc scan reports ${out.summary.total_hosts} hosts, the bare nmap run ${hostsUp}`);
      }
      return {
        ms: r.ms,
        cpuMs: r.cpuMs,
        nmapMs,
        stages,
        tools: toolTimesOf(log),
        findings: out.summary.total_findings,
      };
    };
    const svc = await svcRun(false);
    if (Object.keys(svc.tools).length > 0) throw new Error(`--no-tools ran tools: ${Object.keys(svc.tools)}`);
    const full = withTools ? await svcRun(true) : undefined;
    runs.push({
      nmapMs: nmap.ms,
      svcMs: svc.ms,
      nmapCpuMs: nmap.cpuMs,
      svcCpuMs: svc.cpuMs,
      svcNmapMs: svc.nmapMs,
      stages: svc.stages,
      hostsUp,
      findings: svc.findings,
      ...(full === undefined ? {} : { withTools: full }),
    });
    const toolsPart =
      full === undefined
        ? ''
        : `; with the tools ${round(full.ms)} ms, ${full.findings} findings (` +
          Object.entries(full.tools)
            .map(([name, t]) => `${name} ${t.ms} ms`)
            .join(', ') +
          ')';
    console.log(
      `round ${i + 1}: nmap ${round(nmap.ms)} ms; svc scan --no-tools ${round(svc.ms)} ms (its nmap ${svc.nmapMs} ms, ` +
        `rest ${round(svc.ms - svc.nmapMs)} ms); CPU nmap ${round(nmap.cpuMs)} ms, svc ${round(svc.cpuMs)} ms; ` +
        `${hostsUp} hosts up, ${svc.findings} findings${toolsPart}`,
    );
  }

  const nmapMs = median(runs.map((r) => r.nmapMs));
  const svcMs = median(runs.map((r) => r.svcMs));
  const overhead = svcMs / nmapMs - 1;
  const restMs = median(runs.map((r) => r.svcMs - r.svcNmapMs));
  const inRun = median(runs.map((r) => (r.svcMs - r.svcNmapMs) / r.svcNmapMs));
  const startupMs = median(startup.map((r) => r.ms));
  const startupCpuMs = median(startup.map((r) => r.cpuMs));
  const nmapCpuMs = median(runs.map((r) => r.nmapCpuMs));
  const svcCpuMs = median(runs.map((r) => r.svcCpuMs));
  const extraCpuMs = median(runs.map((r) => r.svcCpuMs - r.nmapCpuMs));
  const stageNames = [...new Set(runs.flatMap((r) => Object.keys(r.stages)))].filter((s) => s !== 'nmap');
  const stages = Object.fromEntries(stageNames.map((s) => [s, median(runs.map((r) => r.stages[s] ?? 0))]));

  console.log(`\nmedian of ${rounds} runs each, ${ips.length} hosts, ports ${PLANTED_PORTS}, profile ${PROFILE}\n`);
  console.log(
    table([
      ['side', 'wall ms', 'CPU ms'],
      ['bare nmap (same argv, same namespace)', round(nmapMs), round(nmapCpuMs)],
      ['svc scan --json --no-tools (CPU: nmap included)', round(svcMs), round(svcCpuMs)],
      ['svc scan outside its nmap run (CPU: svc - nmap)', round(restMs), round(extraCpuMs)],
      ['  Node start-up (svc --version, warm cache)', round(startupMs), round(startupCpuMs)],
      [
        '  Node start-up without the compile cache',
        round(median(uncached.map((r) => r.ms))),
        round(median(uncached.map((r) => r.cpuMs))),
      ],
      ['  the pipeline (pipeline.log end)', stages['pipeline total'] ?? 0, ''],
    ]),
  );
  console.log('\npipeline stages from pipeline.log (median ms)\n');
  console.log(table([['stage', 'ms'], ...Object.entries(stages)]));
  const toolsSummary = summariseTools(
    runs.flatMap((r) => (r.withTools === undefined ? [] : [r.withTools])),
    svcMs,
  );
  if (toolsSummary !== null) {
    console.log(
      `\nthe optional tools, apart (median of ${toolsSummary.runs}): svc scan with them ${round(toolsSummary.wallMs)} ms, ` +
        `${round(toolsSummary.addedMs)} ms more than --no-tools (${pct(toolsSummary.addedMs / toolsSummary.wallMs)} of the run)\n`,
    );
    console.log(
      table([
        ['tool', 'processes', 'seconds', 'share of the run'],
        ...toolsSummary.perTool.map((t) => [t.name, t.processes, round(t.seconds, 2), pct(t.share)]),
      ]),
    );
    console.log(
      '(seconds: its processes, summed, up to 3 at once; share: the time the tools added, split by those seconds)',
    );
  }
  const met = overhead <= GOAL_OVERHEAD;
  console.log(
    `\npipeline overhead (tools off) svc/nmap - 1: ${pct(overhead)} (medians of separate runs); within each svc run ${pct(inRun)} ` +
      `of its own nmap time; CPU beyond nmap's ${round(extraCpuMs)} ms. ` +
      `Goal at most ${pct(GOAL_OVERHEAD)}: ${met ? 'met' : 'NOT met'}. ` +
      `Load average ${loadBefore.join(' ')} before, ${loadavg().join(' ')} after.`,
  );
  const file = writeResult(
    'scan',
    {
      options: { rounds, profile: PROFILE, ports: PLANTED_PORTS, targets: ips, withTools },
      commands: { nmap: nmapArgv, svc: svcArgv('<temp>', false), svcWithTools: svcArgv('<temp>', true) },
      machine: machineInfo(),
      startedAt: started.toISOString(),
      loadavg: { before: loadBefore, after: loadavg() },
      goal: { overhead: GOAL_OVERHEAD },
      goalMet: met,
      summary: {
        nmapMs,
        svcMs,
        overhead,
        restMs,
        inRunOverhead: inRun,
        startupMs,
        startupCpuMs,
        nmapCpuMs,
        svcCpuMs,
        extraCpuMs,
      },
      stages,
      tools: toolsSummary,
      startup: { uncached, first, warm: startup },
      runs,
    },
    started,
  );
  console.log(`\nresults: ${file}`);
}

await runBenchmark(main);
