import { parseArgs } from 'node:util';

/** Knobs every HTTP benchmark shares. Flags win over BENCH_* environment variables. */
export interface BenchOptions {
  /** Measured seconds per run. */
  durationS: number;
  /** Warm-up seconds before each measured run (not reported). */
  warmupS: number;
  connections: number;
  /** Rounds of (baseline, portal); the median of each side is reported. */
  rounds: number;
  /** Upper bound on responses per phase (a phase ends at its duration or at this count). */
  maxRequests: number;
  pipelining: number;
  /** Before each run, wait up to this many seconds for the machine to be idle (0: do not wait). */
  quietWaitS: number;
  /** "Idle" for quietWaitS: whole-machine busy CPU at or below this % of one core. */
  quietBusyPercent: number;
  /** Echo the children's output. */
  verbose: boolean;
  /** Run the portal under `node --cpu-prof` (slows it down: do not report such figures). */
  profile: boolean;
}

const NUMERIC_FLAGS = {
  duration: { env: 'BENCH_DURATION', fallback: 10, min: 1, max: 3600, help: 'measured seconds per run' },
  warmup: { env: 'BENCH_WARMUP', fallback: 3, min: 0, max: 600, help: 'warm-up seconds before each run (0 = none)' },
  connections: {
    env: 'BENCH_CONNECTIONS',
    fallback: 50,
    min: 1,
    max: 10_000,
    help: 'concurrent keep-alive connections',
  },
  rounds: {
    env: 'BENCH_ROUNDS',
    fallback: 3,
    min: 1,
    max: 100,
    help: 'rounds of baseline then portal; medians are reported',
  },
  'max-requests': {
    env: 'BENCH_MAX_REQUESTS',
    fallback: 5_000_000,
    min: 1,
    max: 1e9,
    help: 'cap on responses per phase',
  },
  pipelining: { env: 'BENCH_PIPELINING', fallback: 1, min: 1, max: 100, help: 'requests in flight per connection' },
  'quiet-wait': {
    env: 'BENCH_QUIET_WAIT',
    fallback: 60,
    min: 0,
    max: 3600,
    help: 'seconds to wait for an idle machine before each run (0 = off)',
  },
  'quiet-busy': {
    env: 'BENCH_QUIET_BUSY',
    fallback: 25,
    min: 1,
    max: 10_000,
    help: 'idle = machine busy <= this % of one core',
  },
} as const;

type NumericFlag = keyof typeof NUMERIC_FLAGS;

export function usage(script: string): string {
  const lines = Object.entries(NUMERIC_FLAGS).map(
    ([flag, s]) => `  --${flag}=N`.padEnd(22) + `${s.env}`.padEnd(22) + `${s.help} (default ${s.fallback})`,
  );
  return [
    `usage: node ${script} [flags]   (or: npm run bench -- [flags])`,
    '',
    '  flag'.padEnd(22) + 'env'.padEnd(22) + 'meaning',
    ...lines,
    '  --verbose'.padEnd(22) + 'BENCH_VERBOSE=1'.padEnd(22) + "echo the servers' output",
    '  --profile'.padEnd(22) +
      'BENCH_PROFILE=1'.padEnd(22) +
      'CPU-profile the portal (node --cpu-prof; slower, for analysis only)',
    '  --help',
  ].join('\n');
}

export class OptionsError extends Error {}

export function parseBenchOptions(
  argv: string[] = process.argv.slice(2),
  env: NodeJS.ProcessEnv = process.env,
): BenchOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      rounds: { type: 'string' },
      'max-requests': { type: 'string' },
      pipelining: { type: 'string' },
      'quiet-wait': { type: 'string' },
      'quiet-busy': { type: 'string' },
      verbose: { type: 'boolean' },
      profile: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  const num = (flag: NumericFlag): number => {
    const s = NUMERIC_FLAGS[flag];
    const raw = values[flag] ?? env[s.env];
    if (raw === undefined || raw.trim() === '') return s.fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < s.min || n > s.max)
      throw new OptionsError(`--${flag} / ${s.env} must be a number between ${s.min} and ${s.max} (got "${raw}")`);
    return flag === 'duration' || flag === 'warmup' || flag === 'quiet-wait' || flag === 'quiet-busy'
      ? n
      : Math.floor(n);
  };
  const opts: BenchOptions = {
    durationS: num('duration'),
    warmupS: num('warmup'),
    connections: num('connections'),
    rounds: num('rounds'),
    maxRequests: num('max-requests'),
    pipelining: num('pipelining'),
    quietWaitS: num('quiet-wait'),
    quietBusyPercent: num('quiet-busy'),
    verbose: values.verbose ?? ['1', 'true', 'yes'].includes((env['BENCH_VERBOSE'] ?? '').toLowerCase()),
    profile: values.profile ?? ['1', 'true', 'yes'].includes((env['BENCH_PROFILE'] ?? '').toLowerCase()),
  };
  if (opts.maxRequests < opts.connections) throw new OptionsError('--max-requests must be at least --connections');
  return opts;
}

/** A whole-number flag of a benchmark's own options: `fallback` when absent, else in min..max or an error. */
export function wholeNumber(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(`--${name} must be a whole number from ${min} to ${max}`);
  return n;
}
