import { parseArgs } from 'node:util';
import { OptionsError } from '../lib/options.ts';

/** Knobs of bench/upload.ts. Flags win over BENCH_* environment variables. */
export interface UploadOptions {
  /** Measured rounds; each round is one phase per side. */
  rounds: number;
  /** Warm-up rounds before them (not in the medians). */
  warmupRounds: number;
  /** Uploads in flight at once per phase. */
  concurrency: number;
  /** Bytes of each request body, multipart framing included (at most the 25 MB limit). */
  bodyBytes: number;
  /** Hard limit on the whole run, seconds (portal start included). */
  timeoutS: number;
  /** Before each phase, wait up to this many seconds for the machine to be idle (0: do not wait). */
  quietWaitS: number;
  /** "Idle": whole-machine busy CPU at or below this % of one core. */
  quietBusyPercent: number;
  /** RSS sampling interval, ms. */
  sampleMs: number;
  /** The constant of the memory goal: allowed RSS growth on top of the JSON in flight, MiB. */
  rssAllowanceMiB: number;
  /** Also run the informational side "baseline+fsync". */
  fsyncBaseline: boolean;
  /** Run `sync` before each phase so no phase pays for another's dirty pages. */
  sync: boolean;
  verbose: boolean;
  /** Run the portal and the baseline under `node --cpu-prof` (slows them down: do not report such figures). */
  profile: boolean;
  /** Extra options for node itself, for both servers (analysis, e.g. --trace-gc). */
  nodeArgs: string[];
  /** Findings mode (upload/findings-mode.ts): session sizes in findings; empty for the bytes mode. */
  findings: number[];
  /** Findings mode: the findings' shape (auto: full while the file fits under the limit, else lean). */
  shape: 'auto' | 'full' | 'lean';
  /** Findings mode: one more upload with PostgreSQL's statement log on, its time by statement. */
  statementLog: boolean;
}

const LIMIT = 25 * 1024 * 1024;

const NUMERIC_FLAGS = {
  rounds: {
    env: 'BENCH_ROUNDS',
    fallback: 5,
    min: 1,
    max: 50,
    int: true,
    help: 'measured rounds (one phase per side each); medians are reported',
  },
  'warmup-rounds': {
    env: 'BENCH_WARMUP_ROUNDS',
    fallback: 1,
    min: 0,
    max: 10,
    int: true,
    help: 'warm-up rounds before them (not reported in the medians)',
  },
  concurrency: { env: 'BENCH_CONCURRENCY', fallback: 4, min: 1, max: 32, int: true, help: 'uploads in flight at once' },
  'body-bytes': {
    env: 'BENCH_BODY_BYTES',
    fallback: LIMIT - 1024,
    min: 4096,
    max: LIMIT,
    int: true,
    help: 'bytes per request body, framing included (limit 26214400)',
  },
  timeout: {
    env: 'BENCH_TIMEOUT',
    fallback: 900,
    min: 30,
    max: 7200,
    int: false,
    help: 'hard limit on the whole run, seconds',
  },
  'quiet-wait': {
    env: 'BENCH_QUIET_WAIT',
    fallback: 30,
    min: 0,
    max: 3600,
    int: false,
    help: 'seconds to wait for an idle machine before each phase (0 = off)',
  },
  'quiet-busy': {
    env: 'BENCH_QUIET_BUSY',
    fallback: 25,
    min: 1,
    max: 10_000,
    int: false,
    help: 'idle = machine busy <= this % of one core',
  },
  'sample-ms': {
    env: 'BENCH_SAMPLE_MS',
    fallback: 20,
    min: 5,
    max: 1000,
    int: true,
    help: 'RSS sampling interval, ms',
  },
  'rss-allowance-mb': {
    env: 'BENCH_RSS_ALLOWANCE_MB',
    fallback: 32,
    min: 0,
    max: 4096,
    int: false,
    help: 'memory goal: allowed growth beyond the JSON in flight, MiB',
  },
} as const;

type NumericFlag = keyof typeof NUMERIC_FLAGS;

export function usage(): string {
  const lines = Object.entries(NUMERIC_FLAGS).map(
    ([flag, s]) => `  --${flag}=N`.padEnd(26) + s.env.padEnd(24) + `${s.help} (default ${s.fallback})`,
  );
  return [
    'usage: node bench/upload.ts [flags]',
    '',
    '  flag'.padEnd(26) + 'env'.padEnd(24) + 'meaning',
    ...lines,
    '  --no-fsync-baseline'.padEnd(26) +
      'BENCH_FSYNC_BASELINE=0'.padEnd(24) +
      'skip the informational baseline+fsync side',
    '  --no-sync'.padEnd(26) + 'BENCH_SYNC=0'.padEnd(24) + 'do not run `sync` before each phase',
    '  --verbose'.padEnd(26) + 'BENCH_VERBOSE=1'.padEnd(24) + "echo the servers' output",
    '  --profile'.padEnd(26) +
      'BENCH_PROFILE=1'.padEnd(24) +
      'CPU-profile the portal and the baseline (node --cpu-prof; slower, for analysis only)',
    '  --findings=N,M'.padEnd(26) +
      'BENCH_FINDINGS'.padEnd(24) +
      'findings mode: one session of N findings per upload (e.g. 10000,100000; rounds default 3)',
    '  --shape=auto|full|lean'.padEnd(26) +
      ''.padEnd(24) +
      'findings mode: the findings as the scanner writes them or lean',
    '  --statement-log'.padEnd(26) +
      ''.padEnd(24) +
      "findings mode: one more upload with PostgreSQL's statement log on",
    '  --node-arg=OPT'.padEnd(26) +
      ''.padEnd(24) +
      'extra node option for both servers, repeatable (analysis, e.g. --node-arg=--trace-gc)',
    '  --help',
  ].join('\n');
}

const yes = (v: string | undefined): boolean => ['1', 'true', 'yes'].includes((v ?? '').toLowerCase());
const no = (v: string | undefined): boolean => ['0', 'false', 'no'].includes((v ?? '').toLowerCase());

/** "10000,100000" -> [10000, 100000]; each from 1 to 1,000,000. */
function findingsOf(raw: string | undefined): number[] {
  if (raw === undefined || raw.trim() === '') return [];
  return raw.split(',').map((part) => {
    const n = Number(part.trim());
    if (!Number.isInteger(n) || n < 1 || n > 1_000_000)
      throw new OptionsError(`--findings / BENCH_FINDINGS must list whole numbers from 1 to 1000000 (got "${raw}")`);
    return n;
  });
}

export function parseUploadOptions(
  argv: string[] = process.argv.slice(2),
  env: NodeJS.ProcessEnv = process.env,
): UploadOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      rounds: { type: 'string' },
      'warmup-rounds': { type: 'string' },
      concurrency: { type: 'string' },
      'body-bytes': { type: 'string' },
      timeout: { type: 'string' },
      'quiet-wait': { type: 'string' },
      'quiet-busy': { type: 'string' },
      'sample-ms': { type: 'string' },
      'rss-allowance-mb': { type: 'string' },
      'no-fsync-baseline': { type: 'boolean' },
      'no-sync': { type: 'boolean' },
      verbose: { type: 'boolean' },
      profile: { type: 'boolean' },
      'node-arg': { type: 'string', multiple: true },
      findings: { type: 'string' },
      shape: { type: 'string' },
      'statement-log': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  const findings = findingsOf(values.findings ?? env['BENCH_FINDINGS']);
  const shape = values.shape ?? 'auto';
  if (shape !== 'auto' && shape !== 'full' && shape !== 'lean')
    throw new OptionsError(`--shape must be auto, full or lean (got "${shape}")`);
  const num = (flag: NumericFlag): number => {
    const s = NUMERIC_FLAGS[flag];
    const raw = values[flag] ?? env[s.env];
    if (raw === undefined || raw.trim() === '') return s.fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < s.min || n > s.max)
      throw new OptionsError(`--${flag} / ${s.env} must be a number between ${s.min} and ${s.max} (got "${raw}")`);
    return s.int ? Math.floor(n) : n;
  };
  return {
    // Findings mode: a 100,000-finding round takes tens of seconds, so 3 rounds unless told.
    rounds: findings.length > 0 && values.rounds === undefined && env['BENCH_ROUNDS'] === undefined ? 3 : num('rounds'),
    warmupRounds: num('warmup-rounds'),
    concurrency: num('concurrency'),
    bodyBytes: num('body-bytes'),
    timeoutS: num('timeout'),
    quietWaitS: num('quiet-wait'),
    quietBusyPercent: num('quiet-busy'),
    sampleMs: num('sample-ms'),
    rssAllowanceMiB: num('rss-allowance-mb'),
    fsyncBaseline: values['no-fsync-baseline'] ? false : !no(env['BENCH_FSYNC_BASELINE']),
    sync: values['no-sync'] ? false : !no(env['BENCH_SYNC']),
    verbose: values.verbose ?? yes(env['BENCH_VERBOSE']),
    profile: values.profile ?? yes(env['BENCH_PROFILE']),
    nodeArgs: values['node-arg'] ?? [],
    findings,
    shape,
    statementLog: values['statement-log'] ?? false,
  };
}
