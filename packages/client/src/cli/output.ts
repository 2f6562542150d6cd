import { createColors } from 'picocolors';
import { printableJson, terminalText } from '../kit/text/printable.ts';

/**
 * How a command ended, and the exit code of each (docs/cli.md#exit-codes): the one table errors
 * become exit codes through (endingOf in main.ts). 0, done, is no error.
 */
export const EXIT_CODES = {
  /** A bad option, argument or input file: nothing was attempted. */
  usage: 2,
  /** A setting, config file or credential missing or wrong: nothing was attempted. */
  config: 2,
  /** The operation ran and failed: a check failed, a tool failed, a file could not be read or written. */
  failed: 1,
  /** The portal refused, answered what the protocol does not, or could not be reached. */
  portal: 1,
  /** An error no command expected (a bug): its stack is printed. */
  unexpected: 1,
} as const;

export type ExitKind = keyof typeof EXIT_CODES;

/** An error that ends the command with a one-line reason on stderr and its kind's exit code. */
export class CliError extends Error {
  readonly kind: ExitKind;
  constructor(message: string, kind: ExitKind = 'failed') {
    super(message);
    this.name = 'CliError';
    this.kind = kind;
  }
}

export const usageError = (message: string) => new CliError(message, 'usage');

export interface Streams {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

export type Colors = ReturnType<typeof createColors>;

/**
 * Color only when the stream is an interactive terminal and NO_COLOR is unset (any value,
 * even empty, turns color off: no-color.org). FORCE_COLOR is deliberately not honoured so
 * that output piped into files and CI logs never carries escapes.
 */
const colorOn = (stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv) =>
  stream.isTTY === true && env['NO_COLOR'] === undefined;

/**
 * One place for human output: results to stdout, warnings and progress to stderr. Every text
 * passes terminalText on its way out: control characters and escape sequences (a portal's
 * answer may carry an OSC title or clipboard write) never reach the terminal; only the color
 * sequences of `out`/`err` survive, and only when colors are on. JSON is escaped instead.
 */
export class Output {
  readonly out: Colors;
  readonly err: Colors;
  readonly #s: Streams;
  readonly quiet: boolean;
  readonly #warned = new Set<string>();
  readonly #colorOut: boolean;
  readonly #colorErr: boolean;

  constructor(streams: Streams, opts: { quiet?: boolean } = {}) {
    this.#s = streams;
    this.#colorOut = colorOn(streams.stdout, streams.env);
    this.#colorErr = colorOn(streams.stderr, streams.env);
    this.out = createColors(this.#colorOut);
    this.err = createColors(this.#colorErr);
    this.quiet = opts.quiet ?? false;
  }

  #stdout(text: string): void {
    this.#s.stdout.write(terminalText(text, this.#colorOut));
  }

  #stderr(text: string): void {
    this.#s.stderr.write(terminalText(text, this.#colorErr));
  }

  print(line = ''): void {
    this.#stdout(`${line}\n`);
  }

  /** Text to stdout (a text body) without an added newline; newlines and tabs are kept. */
  write(text: string): void {
    this.#stdout(text);
  }

  /** JSON with every control character escaped (\u001b, \u009b): the same value, nothing for a terminal to act on. */
  json(value: unknown): void {
    this.#s.stdout.write(`${printableJson(value)}\n`);
  }

  info(line: string): void {
    if (!this.quiet) this.#stderr(`${line}\n`);
  }

  /** Warnings go to stderr, each distinct text once per run. */
  warn(message: string): void {
    if (this.#warned.has(message)) return;
    this.#warned.add(message);
    this.#stderr(`${this.err.yellow('warning:')} ${message}\n`);
  }

  error(message: string): void {
    this.#stderr(`${this.err.red('error:')} ${message}\n`);
  }

  get streams(): Streams {
    return this.#s;
  }
}

/** How an upload's share link is shown; a re-upload of a session whose link was revoked has none. */
export function shareLinkText(shareUrl: string | null): string {
  return shareUrl === null
    ? 'share link revoked (an admin or member can make a new one in the portal)'
    : `share URL: ${shareUrl}`;
}

/** The scores of a session as `svc scan`'s last line states them. */
interface ScoredSummary {
  total_findings?: number | undefined;
  total_hosts?: number | undefined;
  risk_score?: number | undefined;
  risk_grade?: string | undefined;
  risk_score_operational?: number | null | undefined;
  risk_grade_operational?: string | null | undefined;
}

/**
 * `svc scan`'s summary: both scores under the report's names (risk score, operational risk),
 * since the operational one is what accepted exceptions leave and the portal's console leads with.
 * Without an operational score (a file older than dual scoring) it is the risk score itself.
 */
export function scanSummaryLine(sessionId: string, s: ScoredSummary | undefined): string {
  const score = s?.risk_score ?? 0;
  const grade = s?.risk_grade ?? '-';
  const operational = s?.risk_score_operational ?? score;
  const operationalGrade = s?.risk_grade_operational ?? grade;
  const hosts = s?.total_hosts ?? 0;
  const findings = s?.total_findings ?? 0;
  return `Session ${sessionId}: ${findings} ${findings === 1 ? 'finding' : 'findings'} on ${hosts} ${hosts === 1 ? 'host' : 'hosts'}, risk score ${score} (${grade}), operational risk ${operational} (${operationalGrade})`;
}
