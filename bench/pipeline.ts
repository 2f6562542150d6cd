/**
 * Benchmark: a 10,000-finding scan on 1,000 hosts through every stage of the scanner pipeline
 * (runStages: findings, remediation against a prior session sharing half the findings,
 * exceptions, scoring, compliance with ORC 9.64, topology, scheduling, license metadata; the
 * alerts evaluation; the report and the executive summary) and the session directory written
 * to a temp dir, against a baseline in the same run: parse the same input, parse and
 * re-serialise the same output document, write the same bytes. Every run is its own process
 * (bench/pipeline/run-once.ts), so each peak RSS is that run's alone; rounds alternate
 * baseline, pipeline and the medians are reported, with the ratio pipeline/baseline.
 * With --chromium the 10,000-finding report is opened in Debian's chromium and its load
 * time recorded. See bench/README.md.
 *
 *   node bench/pipeline.ts [--findings=10000 --hosts=1000 --rounds=5 --seed=964 --chromium --profile]
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import { summarizeProfile } from './lib/profile-summary.ts';
import { installSignalHandlers, runBenchmark, tempDir } from './lib/cleanup.ts';
import { wholeNumber } from './lib/options.ts';
import { machineInfo } from './lib/machine.ts';
import { table, writeResult, RESULTS_DIR, stampOf } from './lib/report.ts';
import { median, round } from './lib/stats.ts';
import { openInChromium, type ChromiumLoad } from './pipeline/chromium.ts';
import { pipelineData } from './pipeline/data.ts';
import { FILES, type RunResult } from './pipeline/files.ts';

const run = promisify(execFile);
const RUN_ONCE = path.join(import.meta.dirname, 'pipeline', 'run-once.ts');
/** The goal for 10,000 findings on this machine. */
const GOAL = { findings: 10_000, totalMs: 2000, maxRssMiB: 300 };

interface Options {
  findings: number;
  hosts: number;
  rounds: number;
  seed: number;
  chromium: boolean;
  profile: boolean;
}

function parseOptions(argv: string[]): Options | 'help' {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      findings: { type: 'string' },
      hosts: { type: 'string' },
      rounds: { type: 'string' },
      seed: { type: 'string' },
      chromium: { type: 'boolean' },
      profile: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  return {
    findings: wholeNumber('findings', values.findings, 10_000, 1, 200_000),
    hosts: wholeNumber('hosts', values.hosts, 1000, 1, 1270),
    rounds: wholeNumber('rounds', values.rounds, 5, 1, 50),
    seed: wholeNumber('seed', values.seed, 964, 0, 0xffff_ffff),
    chromium: values.chromium ?? false,
    profile: values.profile ?? false,
  };
}

async function runOnce(args: string[], nodeArgs: string[] = []): Promise<RunResult> {
  const { stdout } = await run(process.execPath, [...nodeArgs, RUN_ONCE, ...args], { maxBuffer: 1 << 20 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as RunResult;
}

const digestOf = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

function digests(dir: string): Record<string, string> {
  return Object.fromEntries(Object.values(FILES).map((f) => [f, digestOf(path.join(dir, f))]));
}

const loadavg = () => os.loadavg().map((l) => round(l, 2));

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  if (opts === 'help') {
    console.log(
      'node bench/pipeline.ts [--findings=10000] [--hosts=1000] [--rounds=5] [--seed=964] [--chromium] [--profile]',
    );
    return;
  }
  const started = new Date();
  const loadBefore = loadavg();
  installSignalHandlers();
  const dir = tempDir('svc-bench-pipeline-');
  const t0 = performance.now();
  const data = pipelineData({ findings: opts.findings, hosts: opts.hosts, seed: opts.seed });
  const inputFile = path.join(dir, 'input.json');
  fs.writeFileSync(inputFile, JSON.stringify(data));
  console.log(
    `input: ${opts.findings} findings on ${opts.hosts} hosts, ${data.input.exceptions.length} exception rules, ` +
      `prior session with ${(data.input.prior as { findings: unknown[] }).findings.length} findings ` +
      `(${round(fs.statSync(inputFile).size / 2 ** 20, 1)} MiB, generated in ${round((performance.now() - t0) / 1000, 1)} s)`,
  );

  // A first pipeline run (not counted) writes the bytes the baseline writes.
  const reference = path.join(dir, 'reference');
  fs.mkdirSync(reference);
  const first = await runOnce(['pipeline', inputFile, reference]);
  const sessionId = data.input.settings.sessionId;
  const expectedDir = path.join(reference, sessionId);
  const expected = digests(expectedDir);
  console.log(
    `reference run: ${round(first.totalMs)} ms, ${first.alerts} alerts, files ${JSON.stringify(first.bytes)}`,
  );

  const runs: RunResult[] = [];
  for (let i = 0; i < opts.rounds; i++) {
    for (const mode of ['baseline', 'pipeline'] as const) {
      const root = path.join(dir, `${mode}-${i}`);
      fs.mkdirSync(root);
      const result = await runOnce([mode, inputFile, root, ...(mode === 'baseline' ? [expectedDir] : [])]);
      // Same bytes every time: the pipeline is deterministic and the baseline writes its output.
      const got = digests(path.join(root, sessionId));
      for (const f of [FILES.json, FILES.report, FILES.exec])
        if (got[f] !== expected[f]) throw new Error(`${mode} run ${i + 1}: ${f} differs from the reference run`);
      fs.rmSync(root, { recursive: true });
      runs.push(result);
      console.log(
        `round ${i + 1} ${mode.padEnd(8)} ${String(round(result.totalMs)).padStart(8)} ms  cpu ${String(round(result.cpuMs)).padStart(8)} ms  maxRSS ${round(result.maxRssMiB, 1)} MiB`,
      );
    }
  }

  const side = (mode: RunResult['mode']) => runs.filter((r) => r.mode === mode);
  const med = (rs: RunResult[], f: (r: RunResult) => number) => median(rs.map(f));
  const pipe = side('pipeline');
  const base = side('baseline');
  const summary = {
    pipeline: {
      totalMs: round(med(pipe, (r) => r.totalMs)),
      cpuMs: round(med(pipe, (r) => r.cpuMs)),
      maxRssMiB: round(
        med(pipe, (r) => r.maxRssMiB),
        1,
      ),
    },
    baseline: {
      totalMs: round(med(base, (r) => r.totalMs)),
      cpuMs: round(med(base, (r) => r.cpuMs)),
      maxRssMiB: round(
        med(base, (r) => r.maxRssMiB),
        1,
      ),
    },
  };
  const ratio = {
    totalMs: round(summary.pipeline.totalMs / summary.baseline.totalMs),
    cpuMs: round(summary.pipeline.cpuMs / summary.baseline.cpuMs),
    maxRssMiB: round(summary.pipeline.maxRssMiB / summary.baseline.maxRssMiB),
  };
  const stageNames = [...new Set(pipe.flatMap((r) => Object.keys(r.stages)))];
  const stages = Object.fromEntries(stageNames.map((s) => [s, round(med(pipe, (r) => r.stages[s] ?? 0))]));

  console.log(`\nmedian of ${opts.rounds} runs each (${opts.findings} findings, ${opts.hosts} hosts)\n`);
  console.log(
    table([
      ['side', 'wall ms', 'cpu ms', 'max RSS MiB'],
      [
        'baseline (parse, re-serialise, write)',
        summary.baseline.totalMs,
        summary.baseline.cpuMs,
        summary.baseline.maxRssMiB,
      ],
      [
        'pipeline (every stage, both HTML, write)',
        summary.pipeline.totalMs,
        summary.pipeline.cpuMs,
        summary.pipeline.maxRssMiB,
      ],
      ['pipeline / baseline', ratio.totalMs, ratio.cpuMs, ratio.maxRssMiB],
    ]),
  );
  console.log(`\npipeline stages (median ms)\n`);
  console.log(table([['stage', 'ms'], ...Object.entries(stages)]));
  // The goal is stated for 10,000 findings; other sizes report no verdict.
  const met =
    opts.findings === GOAL.findings
      ? summary.pipeline.totalMs < GOAL.totalMs && summary.pipeline.maxRssMiB < GOAL.maxRssMiB
      : null;
  console.log(
    `\ngoal for ${GOAL.findings} findings (under ${GOAL.totalMs} ms and ${GOAL.maxRssMiB} MiB): ${met === null ? 'not this size' : met ? 'met' : 'NOT met'}; load average ${loadBefore.join(' ')} before, ${loadavg().join(' ')} after`,
  );

  let chromium: ChromiumLoad | null = null;
  if (opts.chromium) {
    chromium = await openInChromium(path.join(expectedDir, FILES.report), 3);
    console.log(
      `\nchromium: report ${round(first.bytes[FILES.report]! / 2 ** 20, 1)} MiB, load median ${chromium.loadMs} ms ` +
        `(runs ${chromium.runs.map((r) => r.loadMs).join(', ')}), ${chromium.nodes} DOM nodes, ` +
        `JS heap ${chromium.jsHeapMiB} MiB, ${chromium.consoleErrors.length} console errors`,
    );
  }

  let profile: unknown = null;
  if (opts.profile) {
    const profDir = path.join(RESULTS_DIR, `pipeline-${stampOf(started)}-profile`);
    fs.mkdirSync(profDir, { recursive: true });
    const root = path.join(dir, 'profile');
    fs.mkdirSync(root);
    await runOnce(['pipeline', inputFile, root], ['--cpu-prof', `--cpu-prof-dir=${profDir}`]);
    const file = fs.readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'))!;
    const s = summarizeProfile(JSON.parse(fs.readFileSync(path.join(profDir, file), 'utf8')));
    profile = { file: path.join(profDir, file), bySelf: s.bySelf.slice(0, 25), byTotal: s.byTotal.slice(0, 25) };
    console.log(`\nprofile: ${path.join(profDir, file)} (node bench/lib/profile-summary.ts <file>)`);
    console.log(table([['inclusive ms', 'function'], ...s.byTotal.slice(0, 20).map(([f, ms]) => [round(ms, 1), f])]));
  }

  const file = writeResult(
    'pipeline',
    {
      options: opts,
      machine: machineInfo(),
      startedAt: started.toISOString(),
      loadavg: { before: loadBefore, after: loadavg() },
      goal: GOAL,
      goalMet: met,
      summary,
      ratio,
      stages,
      reference: first,
      runs,
      chromium,
      profile,
    },
    started,
  );
  console.log(`\nresults: ${file}`);
}

await runBenchmark(main);
