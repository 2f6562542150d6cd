import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Database } from './schema.ts';

export interface DatabaseHandle {
  pool: pg.Pool;
  db: Kysely<Database>;
  close(): Promise<void>;
}

/**
 * One pool per process. The `error` listener keeps an idle client's dropped connection
 * (a database restart) from crashing the process; the short connect timeout turns an
 * unreachable database into a fast 503 instead of a hung request.
 */
export function openDatabase(
  url: string,
  opts: { max: number; logger: Logger; onAcquire?: (seconds: number) => void },
): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max,
    connectionTimeoutMillis: 2_000,
    idleTimeoutMillis: 30_000,
    application_name: 'svc-portal',
  });
  pool.on('error', (err) =>
    opts.logger.warn(
      { err: { message: err.message, code: (err as { code?: string }).code } },
      'idle database connection failed',
    ),
  );
  if (opts.onAcquire) timeAcquire(pool, opts.onAcquire);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { pool, db, close: () => db.destroy() };
}

type ConnectCallback = (err: Error | undefined, client: pg.PoolClient | undefined, release: () => void) => void;

/**
 * Times every checkout: pg's Pool has no event for how long a caller waited. Both forms are
 * wrapped, since `pool.query` checks out through the callback form of `connect`.
 */
function timeAcquire(pool: pg.Pool, observe: (seconds: number) => void): void {
  const connect = pool.connect.bind(pool) as (cb?: ConnectCallback) => Promise<pg.PoolClient> | undefined;
  const wrapped = (cb?: ConnectCallback) => {
    const started = performance.now();
    const done = () => observe((performance.now() - started) / 1000);
    if (cb !== undefined)
      return connect((err, client, release) => {
        done();
        cb(err, client, release);
      });
    return (connect() as Promise<pg.PoolClient>).finally(done);
  };
  pool.connect = wrapped as typeof pool.connect;
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '53300',
]);

/** True when an error means "the database cannot be reached right now" rather than a bug. */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: string }).code;
  if (code !== undefined && UNAVAILABLE_CODES.has(code)) return true;
  // The embedded server's Unix socket file is gone while it is stopped (not any other ENOENT).
  if (code === 'ENOENT' && (err as { syscall?: string }).syscall === 'connect') return true;
  if (err instanceof AggregateError) return err.errors.some(isDatabaseUnavailable);
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connection terminated unexpectedly/i.test(
    err.message,
  );
}

/** A transaction the database gave up on because of another one (serialisation failure, deadlock): worth one more try. */
export function isDatabaseConflict(err: unknown): boolean {
  const code = err instanceof Error ? (err as { code?: string }).code : undefined;
  return code === '40001' || code === '40P01';
}
