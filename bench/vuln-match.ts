/**
 * Benchmark: matching 10,000 services against a vulnerability index of 250,000 CVE records
 * (packages/client/src/cve-match/vuln-index-match.ts), the index loaded from its JSON file
 * in the measured time, against two floors in the same run on the same files: loading and parsing
 * the index alone, and the hand-table matcher over the same services (what a scan does without
 * an index). Every pass is its own process (bench/vuln-match/run-once.ts), so each peak RSS is
 * that pass's alone; rounds alternate load, hand, match and the medians are reported with the
 * ratios. The temp files are removed at the end, also on error or interrupt. See bench/README.md.
 *
 *   node bench/vuln-match.ts [--cves=250000 --services=10000 --rounds=3 --seed=26 --semi-space=MiB]
 *
 * `--semi-space` runs the passes with node's --max-semi-space-size: V8's young generation is
 * most of the peak above the live heap while the index is read (bench/README.md).
 */
import { execFile } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { installSignalHandlers, runBenchmark, tempDir } from './lib/cleanup.ts';
import { wholeNumber } from './lib/options.ts';
import { machineInfo } from './lib/machine.ts';
import { table, writeResult } from './lib/report.ts';
import { median, round } from './lib/stats.ts';
import { generateVulnBench } from './vuln-match/generate.ts';
import type { VulnMode, VulnRun } from './vuln-match/run-once.ts';

const run = promisify(execFile);
const RUN_ONCE = path.join(import.meta.dirname, 'vuln-match', 'run-once.ts');
const MODES: readonly VulnMode[] = ['load', 'hand', 'match'];
const LABELS: Record<VulnMode, string> = {
  load: 'load index (one JSON.parse)',
  hand: 'hand table only (no index)',
  match: 'read index in chunks + match all',
};
const TARGET = { ms: 2000, rssMiB: 300 };

function options(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      cves: { type: 'string' },
      services: { type: 'string' },
      rounds: { type: 'string' },
      seed: { type: 'string' },
      'semi-space': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  return {
    help: values.help ?? false,
    cves: wholeNumber('cves', values.cves, 250_000, 8, 2_000_000),
    services: wholeNumber('services', values.services, 10_000, 1, 1_000_000),
    rounds: wholeNumber('rounds', values.rounds, 3, 1, 20),
    seed: wholeNumber('seed', values.seed, 26, 0, 0xffff_ffff),
    semiSpaceMiB:
      values['semi-space'] === undefined ? null : wholeNumber('semi-space', values['semi-space'], 0, 1, 256),
  };
}

async function runOnce(
  mode: VulnMode,
  indexFile: string,
  servicesFile: string,
  semiSpaceMiB: number | null,
): Promise<VulnRun> {
  const flags = ['--expose-gc', ...(semiSpaceMiB === null ? [] : [`--max-semi-space-size=${semiSpaceMiB}`])];
  const { stdout } = await run(process.execPath, [...flags, RUN_ONCE, mode, indexFile, servicesFile], {
    maxBuffer: 1 << 20,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as VulnRun;
}

const loadavg = () => os.loadavg().map((l) => round(l, 2));

async function main(): Promise<void> {
  const opts = options(process.argv.slice(2));
  if (opts.help) {
    console.log(
      'node bench/vuln-match.ts [--cves=250000] [--services=10000] [--rounds=3] [--seed=26] [--semi-space=MiB]',
    );
    return;
  }
  const started = new Date();
  const loadBefore = loadavg();
  installSignalHandlers();
  const dir = tempDir('svc-bench-vuln-match-');
  const t0 = performance.now();
  const gen = generateVulnBench(dir, opts.cves, opts.services, opts.seed);
  console.log(
    `input: ${gen.cves} CVEs over ${gen.products} products, ${gen.ranges} ranges, ` +
      `${round(gen.indexBytes / 2 ** 20, 1)} MiB of JSON; ${gen.services} services, ${gen.knownProducts} ` +
      `on a product of the index with a version (${gen.distinctPairs} distinct product and version pairs); ` +
      `Debian: ${gen.debianPackages} packages, ${gen.debianStatements} release statements, ${gen.debianServices} ` +
      'services with a package revision; ' +
      `generated in ${round((performance.now() - t0) / 1000, 1)} s`,
  );

  const runs: VulnRun[] = [];
  for (let i = 0; i < opts.rounds; i++) {
    for (const mode of MODES) {
      const r = await runOnce(mode, gen.indexFile, gen.servicesFile, opts.semiSpaceMiB);
      runs.push(r);
      console.log(
        `round ${i + 1} ${mode.padEnd(5)} ${String(round(r.ms)).padStart(7)} ms  cpu ${String(round(r.cpuMs)).padStart(7)} ms  ` +
          `peak RSS ${round(r.maxRssMiB, 1)} MiB  live heap ${round(r.liveHeapMiB, 1)} MiB  ${r.matches} matches`,
      );
    }
  }
  const matched = new Set(runs.filter((r) => r.mode === 'match').map((r) => r.matches));
  if (matched.size !== 1) throw new Error(`the matcher found different counts in different rounds: ${[...matched]}`);

  const side = (mode: VulnMode) => {
    const rs = runs.filter((r) => r.mode === mode);
    const m = (pick: (r: VulnRun) => number, digits = 0) => round(median(rs.map(pick)), digits);
    return {
      ms: m((r) => r.ms),
      matchMs: m((r) => r.matchMs),
      cpuMs: m((r) => r.cpuMs),
      maxRssMiB: m((r) => r.maxRssMiB, 1),
      startRssMiB: m((r) => r.startRssMiB, 1),
      liveHeapMiB: m((r) => r.liveHeapMiB, 1),
      matches: m((r) => r.matches),
    };
  };
  const summary = { load: side('load'), hand: side('hand'), match: side('match') };
  const ratios = {
    matchOverLoad: {
      ms: round(summary.match.ms / summary.load.ms),
      maxRssMiB: round(summary.match.maxRssMiB / summary.load.maxRssMiB),
    },
    matchingOverHand: { ms: round(summary.match.matchMs / summary.hand.matchMs) },
  };
  const target = {
    ms: summary.match.ms < TARGET.ms,
    peakRss: summary.match.maxRssMiB < TARGET.rssMiB,
    peakRssOverStart: summary.match.maxRssMiB - summary.match.startRssMiB < TARGET.rssMiB,
    liveHeap: summary.match.liveHeapMiB < TARGET.rssMiB,
  };

  console.log(`\nmedian of ${opts.rounds} runs each\n`);
  console.log(
    table([
      ['pass', 'wall ms', 'matching ms', 'cpu ms', 'peak RSS MiB', 'RSS at start MiB', 'live heap MiB', 'matches'],
      ...MODES.map((m) => [
        LABELS[m],
        summary[m].ms,
        m === 'load' ? '' : summary[m].matchMs,
        summary[m].cpuMs,
        summary[m].maxRssMiB,
        summary[m].startRssMiB,
        summary[m].liveHeapMiB,
        m === 'load' ? '' : summary[m].matches,
      ]),
      ['match / load', ratios.matchOverLoad.ms, '', '', ratios.matchOverLoad.maxRssMiB, '', '', ''],
      ['matching / hand table', '', ratios.matchingOverHand.ms, '', '', '', '', ''],
    ]),
  );
  console.log(
    `\ntarget ${TARGET.ms} ms and ${TARGET.rssMiB} MiB: wall ${target.ms ? 'met' : 'missed'}; peak RSS ` +
      `${target.peakRss ? 'met' : 'missed'} (over the process's RSS at start: ${target.peakRssOverStart ? 'met' : 'missed'}); ` +
      `live heap ${target.liveHeap ? 'met' : 'missed'}`,
  );
  console.log(`load average ${loadBefore.join(' ')} before, ${loadavg().join(' ')} after`);
  const file = writeResult(
    'vuln-match',
    {
      options: opts,
      machine: machineInfo(),
      startedAt: started.toISOString(),
      loadavg: { before: loadBefore, after: loadavg() },
      input: { ...gen, indexFile: undefined, servicesFile: undefined },
      summary,
      ratios,
      target,
      runs,
    },
    started,
  );
  console.log(`\nresults: ${file}`);
}

await runBenchmark(main);
