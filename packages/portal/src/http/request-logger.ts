import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, Level, Logger } from 'pino';

/**
 * `request.log` without a pino child per request: the child, with its
 * request id binding and redaction, is built the first time the request logs at an enabled
 * level. A request that logs nothing at the configured level (a successful heartbeat or key
 * check at `info`) builds none. What a line says is unchanged: it is written by the same child.
 */
export class LazyRequestLogger {
  readonly #parent: Logger;
  readonly #bindings: Bindings;
  readonly #opts: ChildLoggerOptions;
  #child: Logger | null = null;

  constructor(parent: Logger, bindings: Bindings, opts: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#opts = opts;
  }

  #real(): Logger {
    this.#child ??= this.#parent.child(this.#bindings, this.#opts);
    return this.#child;
  }

  #write(level: Level, args: unknown[]): void {
    if (this.#child === null && !this.#parent.isLevelEnabled(level)) return;
    const real = this.#real();
    (real[level] as (...a: unknown[]) => void).apply(real, args);
  }

  get level(): string {
    return this.#child?.level ?? this.#parent.level;
  }

  set level(level: string) {
    this.#real().level = level;
  }

  isLevelEnabled(level: string): boolean {
    return (this.#child ?? this.#parent).isLevelEnabled(level);
  }

  // Methods on the prototype, not arrow fields: no closures per request.
  fatal(...args: unknown[]): void {
    this.#write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#write('error', args);
  }
  warn(...args: unknown[]): void {
    this.#write('warn', args);
  }
  info(...args: unknown[]): void {
    this.#write('info', args);
  }
  debug(...args: unknown[]): void {
    this.#write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#write('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, opts?: ChildLoggerOptions): Logger {
    return this.#real().child(bindings, opts);
  }
}

/**
 * Fastify's childLoggerFactory. A route with its own log level gets a real child at once
 * (its level, not the parent's, decides what is enabled).
 */
export function lazyChildLogger(
  this: unknown,
  logger: FastifyBaseLogger,
  bindings: Bindings,
  opts: ChildLoggerOptions,
): FastifyBaseLogger {
  if (opts.level !== undefined) return logger.child(bindings, opts);
  // The portal's logger is pino's (logging.ts): it has isLevelEnabled.
  return new LazyRequestLogger(logger as Logger, bindings, opts) as unknown as FastifyBaseLogger;
}
