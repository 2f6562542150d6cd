import { randomInt } from 'node:crypto';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Command } from 'commander';
import { planCollection, type GenerateOptions } from '../../synthetic/generate.ts';
import {
  DEFAULT_MIX,
  MAX_FINDINGS,
  MAX_SESSIONS,
  parseCount,
  parseInterval,
  parseMix,
  parseSeed,
  parseText,
  parseTrend,
  SyntheticOptionError,
  TRENDS,
} from '../../synthetic/options.ts';
import { MAX_SEED } from '../../synthetic/random.ts';
import type { CliContext } from '../context.ts';
import { CliError, Output, usageError } from '../output.ts';

/** Where the session directories go when -o is not given (relative to the working directory). */
export const DEFAULT_OUTPUT = 'synthetic_sessions';

interface SyntheticOpts {
  target?: string;
  sessions: string;
  findings: string;
  mix: string;
  interval: string;
  trend: string;
  withExceptions: string;
  seed?: string;
  clientId?: string;
  output: string;
  json?: boolean;
}

/**
 * Every value is checked here rather than by commander so that each bad input ends the same
 * way: one `error: ...` line and exit 2.
 */
function optionsOf(opts: SyntheticOpts, ctx: CliContext): GenerateOptions {
  if (opts.target === undefined)
    throw new SyntheticOptionError('--target is required (the scanned network or host, e.g. 10.20.0.0/24)');
  const seeded = opts.seed !== undefined;
  return {
    target: parseText('--target', opts.target, 256),
    sessions: parseCount('--sessions', opts.sessions, 1, MAX_SESSIONS),
    findings: parseCount('--findings', opts.findings, 0, MAX_FINDINGS),
    mix: parseMix(opts.mix),
    intervalMs: parseInterval(opts.interval),
    trend: parseTrend(opts.trend),
    exceptions: parseCount('--with-exceptions', opts.withExceptions, 0, MAX_FINDINGS),
    seed: opts.seed === undefined ? randomInt(0, MAX_SEED + 1) : parseSeed(opts.seed),
    seeded,
    clientId: opts.clientId === undefined ? undefined : parseText('--client-id', opts.clientId, 128),
    now: ctx.now(),
  };
}

export default function register(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('synthetic-collection')
    .description(
      'generate synthetic scan sessions through the scanner pipeline (session_results.json, pipeline.log, report and executive summary per session directory) for demos and tests',
    )
    .option('--target <string>', 'scanned target written into every session, e.g. 10.20.0.0/24 (required)')
    .option('--sessions <N>', `number of sessions, 1 to ${MAX_SESSIONS}`, '1')
    .option('--findings <N>', `findings in the first (oldest) session, 0 to ${MAX_FINDINGS}`, '15')
    .option('--mix <spec>', 'percent of findings per severity, adding up to 100', DEFAULT_MIX)
    .option('--interval <duration>', 'time between sessions: a number and s, m, h, d or w (30m, 12h, 7d, 2w)', '7d')
    .option('--trend <trend>', `how findings and risk develop over the sessions: ${TRENDS.join('|')}`, 'stable')
    .option(
      '--with-exceptions <N>',
      'findings per session accepted as risk exceptions (exceptions file; deferred from the next session on)',
      '0',
    )
    .option(
      '--seed <N>',
      `seed 0 to ${MAX_SEED}: the same seed and options give byte-identical sessions (the newest session then starts 2025-01-06T02:00:00Z instead of an hour ago)`,
    )
    .option('--client-id <string>', 'metadata.client_id of the sessions (an upload with a license key replaces it)')
    .option('-o, --output <dir>', 'directory the session directories are written into', DEFAULT_OUTPUT)
    .option('--json', 'print the created session directories as a JSON array only');
  cmd.addHelpText(
    'after',
    '\nEach session is a directory <output>/<YYYYMMDD_HHMMSS> (UTC) ready for `svc upload <dir>`. Prints one session directory per line\n' +
      '(a summary goes to stderr), or with --json only the JSON array. Exit 0 done; 1 a write failed; 2 usage.\n' +
      'docs/cli/synthetic_collection.md describes the generated files.',
  );
  cmd.action(async (opts: SyntheticOpts) => {
    const out = new Output(ctx.streams);
    let options: GenerateOptions;
    let collection: ReturnType<typeof planCollection>;
    try {
      options = optionsOf(opts, ctx);
      collection = planCollection(options);
    } catch (err) {
      if (err instanceof SyntheticOptionError) throw usageError(err.message);
      throw err;
    }
    for (const w of collection.warnings) out.warn(w);
    // The pipeline and the renderers load only when sessions are really produced.
    const { produceCollection, SessionWriteError } = await import('../../synthetic/chain.ts');
    const { progressBar } = await import('../progress.ts');
    const root = path.resolve(opts.output);
    const progress = progressBar(ctx.streams.stderr, options.sessions);
    let written: Awaited<ReturnType<typeof produceCollection>>;
    try {
      written = await produceCollection(options, collection.sessions, {
        root,
        // Seeded runs log every stage as 0 ms so the files stay byte-identical.
        clock: options.seeded ? () => 0 : () => performance.now(),
        onSession: () => progress.tick(),
      });
    } catch (err) {
      if (err instanceof SessionWriteError) throw new CliError(err.message);
      throw err;
    } finally {
      progress.stop();
    }
    const created = written.map((w) => w.path);
    const risks = written.map((w) => w.risk_score);
    const totals = written.map((w) => w.total_findings);
    if (opts.json) return out.json(created);
    for (const dir of created) out.print(dir);
    const series = (xs: number[]) => (xs.length <= 12 ? xs.join(' → ') : `${xs[0]} → … → ${xs[xs.length - 1]}`);
    out.info(
      `Created ${created.length} synthetic session${created.length === 1 ? '' : 's'} for ${options.target} in ${root} ` +
        `(seed ${options.seed}${options.seeded ? '' : ', random'}; trend ${options.trend}; findings ${series(totals)}; risk ${series(risks)})`,
    );
  });
}
