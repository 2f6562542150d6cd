/**
 * Benchmark: the client's streaming nmap XML parser (packages/client/src/scanner/parse/) over a
 * generated 10,000-host `-oX` file (bench/nmap-parse/generate.ts), against two floors in the same
 * run on the same file: reading and decoding it with no parse, and saxes alone with empty handlers.
 * Every pass is its own process (bench/nmap-parse/run-once.ts), so each peak RSS is that pass's
 * alone; rounds alternate read, saxes, parse and the medians are reported with the ratios.
 * The temp file is removed at the end, also on error or interrupt. See bench/README.md.
 *
 *   node bench/nmap-parse.ts [--hosts=10000 --rounds=3 --seed=14]
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
import { generateNmapXml } from './nmap-parse/generate.ts';
import type { ParseMode, ParseRun } from './nmap-parse/run-once.ts';

const run = promisify(execFile);
const RUN_ONCE = path.join(import.meta.dirname, 'nmap-parse', 'run-once.ts');
const MODES: readonly ParseMode[] = ['read', 'saxes', 'parse'];
const LABELS: Record<ParseMode, string> = {
  read: 'read + decode (no parse)',
  saxes: 'saxes alone (no model)',
  parse: 'client parser (parseNmapStream)',
};

function options(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      hosts: { type: 'string' },
      rounds: { type: 'string' },
      seed: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  return {
    help: values.help ?? false,
    hosts: wholeNumber('hosts', values.hosts, 10_000, 1, 1_000_000),
    rounds: wholeNumber('rounds', values.rounds, 3, 1, 20),
    seed: wholeNumber('seed', values.seed, 14, 0, 0xffff_ffff),
  };
}

async function runOnce(mode: ParseMode, file: string): Promise<ParseRun> {
  const { stdout } = await run(process.execPath, [RUN_ONCE, mode, file], { maxBuffer: 1 << 20 });
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as ParseRun;
}

const loadavg = () => os.loadavg().map((l) => round(l, 2));

async function main(): Promise<void> {
  const opts = options(process.argv.slice(2));
  if (opts.help) {
    console.log('node bench/nmap-parse.ts [--hosts=10000] [--rounds=3] [--seed=14]');
    return;
  }
  const started = new Date();
  const loadBefore = loadavg();
  installSignalHandlers();
  const dir = tempDir('svc-bench-nmap-parse-');
  const t0 = performance.now();
  const gen = await generateNmapXml(path.join(dir, 'scan.xml'), opts.hosts, opts.seed);
  console.log(
    `input: ${gen.hosts} hosts (${gen.up} up), ${gen.ports} open ports, ${gen.scripts} NSE script outputs, ` +
      `${gen.osHosts} hosts with OS matches; ${round(gen.bytes / 2 ** 20, 1)} MiB, generated in ` +
      `${round((performance.now() - t0) / 1000, 1)} s`,
  );

  const runs: ParseRun[] = [];
  for (let i = 0; i < opts.rounds; i++) {
    for (const mode of MODES) {
      const r = await runOnce(mode, gen.file);
      if (r.bytes !== gen.bytes) throw new Error(`${mode} read ${r.bytes} of ${gen.bytes} bytes`);
      if (mode === 'parse' && (r.count !== gen.hosts || r.ports !== gen.ports)) {
        throw new Error(
          `the parser handed over ${r.count} hosts and ${r.ports} ports, not ${gen.hosts} and ${gen.ports}`,
        );
      }
      runs.push(r);
      console.log(
        `round ${i + 1} ${mode.padEnd(5)} ${String(round(r.ms)).padStart(7)} ms  cpu ${String(round(r.cpuMs)).padStart(7)} ms  maxRSS ${round(r.maxRssMiB, 1)} MiB`,
      );
    }
  }

  const side = (mode: ParseMode) => {
    const rs = runs.filter((r) => r.mode === mode);
    return {
      ms: round(median(rs.map((r) => r.ms))),
      cpuMs: round(median(rs.map((r) => r.cpuMs))),
      maxRssMiB: round(median(rs.map((r) => r.maxRssMiB)), 1),
      startRssMiB: round(median(rs.map((r) => r.startRssMiB)), 1),
    };
  };
  const summary = { read: side('read'), saxes: side('saxes'), parse: side('parse') };
  const ratio = (base: ParseMode) => ({
    ms: round(summary.parse.ms / summary[base].ms),
    cpuMs: round(summary.parse.cpuMs / summary[base].cpuMs),
    maxRssMiB: round(summary.parse.maxRssMiB / summary[base].maxRssMiB),
  });
  const ratios = { read: ratio('read'), saxes: ratio('saxes') };
  const mibPerS = round(gen.bytes / 2 ** 20 / (summary.parse.ms / 1000), 1);
  const hostsPerS = Math.round(gen.hosts / (summary.parse.ms / 1000));

  console.log(`\nmedian of ${opts.rounds} runs each (${gen.hosts} hosts, ${round(gen.bytes / 2 ** 20, 1)} MiB)\n`);
  console.log(
    table([
      ['pass', 'wall ms', 'cpu ms', 'peak RSS MiB', 'RSS at start MiB'],
      ...MODES.map((m) => [LABELS[m], summary[m].ms, summary[m].cpuMs, summary[m].maxRssMiB, summary[m].startRssMiB]),
      ['parser / read', ratios.read.ms, ratios.read.cpuMs, ratios.read.maxRssMiB, ''],
      ['parser / saxes', ratios.saxes.ms, ratios.saxes.cpuMs, ratios.saxes.maxRssMiB, ''],
    ]),
  );
  console.log(
    `\nparser: ${hostsPerS} hosts/s, ${mibPerS} MiB/s; load average ${loadBefore.join(' ')} before, ${loadavg().join(' ')} after`,
  );
  const file = writeResult(
    'nmap-parse',
    {
      options: opts,
      machine: machineInfo(),
      startedAt: started.toISOString(),
      loadavg: { before: loadBefore, after: loadavg() },
      input: { ...gen, file: undefined },
      summary,
      ratios,
      throughput: { hostsPerS, mibPerS },
      runs,
    },
    started,
  );
  console.log(`\nresults: ${file}`);
}

await runBenchmark(main);
