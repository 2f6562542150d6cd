import { createColors } from 'picocolors';

/**
 * Exit codes of every `svc` command and tool (README "Exit codes"):
 * 0 done (the default); 1 the operation ran and failed (a check failed, the portal refused, a request
 * failed); 2 usage or configuration error (bad option, missing required setting or file),
 * nothing was attempted.
 */
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** An error that ends the command with a one-line reason on stderr and the given exit code. */
export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode: number = EXIT_FAILED) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

export const usageError = (message: string) => new CliError(message, EXIT_USAGE);

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
export function colorsFor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): Colors {
  return createColors(stream.isTTY === true && env['NO_COLOR'] === undefined);
}

/** One place for human output: results to stdout, warnings and progress to stderr. */
export class Output {
  readonly out: Colors;
  readonly err: Colors;
  readonly #s: Streams;
  readonly quiet: boolean;
  readonly #warned = new Set<string>();

  constructor(streams: Streams, opts: { quiet?: boolean } = {}) {
    this.#s = streams;
    this.out = colorsFor(streams.stdout, streams.env);
    this.err = colorsFor(streams.stderr, streams.env);
    this.quiet = opts.quiet ?? false;
  }

  print(line = ''): void {
    this.#s.stdout.write(`${line}\n`);
  }

  /** Raw text to stdout (a downloaded body, JSON) without an added newline. */
  write(text: string): void {
    this.#s.stdout.write(text);
  }

  json(value: unknown): void {
    this.#s.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  info(line: string): void {
    if (!this.quiet) this.#s.stderr.write(`${line}\n`);
  }

  /** Warnings go to stderr, each distinct text once per run. */
  warn(message: string): void {
    if (this.#warned.has(message)) return;
    this.#warned.add(message);
    this.#s.stderr.write(`${this.err.yellow('warning:')} ${message}\n`);
  }

  error(message: string): void {
    this.#s.stderr.write(`${this.err.red('error:')} ${message}\n`);
  }

  get streams(): Streams {
    return this.#s;
  }
}
