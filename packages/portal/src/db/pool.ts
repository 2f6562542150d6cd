import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import { DEFAULT_DB_BOUNDS } from '../config/database.ts';
import type { Database } from './schema.ts';

export interface DatabaseHandle {
  pool: pg.Pool;
  db: Kysely<Database>;
  close(): Promise<void>;
}

export interface PoolOptions {
  max: number;
  logger: Logger;
  /** Opening one connection at most (SVC_DB_CONNECT_TIMEOUT_MS; default: docs/configuration.md). */
  connectTimeoutMs?: number;
  /** Waiting for a free connection while all `max` are busy, at most (SVC_DB_POOL_WAIT_MS; default: docs/configuration.md). */
  poolWaitMs?: number;
  /** Told how long each checkout took, the failed ones included. */
  onAcquire?: ((seconds: number) => void) | undefined;
}

/** Every pooled connection was busy for the whole wait: the server is busy, not down. */
export class DatabaseBusyError extends Error {
  readonly code = 'SVC_DB_POOL_WAIT';
  constructor(waitMs: number) {
    super(`no database connection became free within ${waitMs} ms`);
    this.name = 'DatabaseBusyError';
  }
}

/**
 * One pool per process. Every connection has an `error` listener from the moment it opens,
 * checked out or idle: pg-pool listens only while a connection is idle, and a connection that
 * a database crash ends while a request holds it (57P01, "Connection terminated
 * unexpectedly") would otherwise be an unhandled `error` event that ends the process. The
 * request then fails on its next query and gets the 503 of src/http/errors.ts.
 *
 * pg-pool has one timeout for opening a connection and for waiting on a full pool; they are
 * separate here: the connection's own (pg.Client's `connectionTimeoutMillis`) and the wait,
 * bounded in `boundCheckouts`.
 */
export function openDatabase(url: string, opts: PoolOptions): DatabaseHandle {
  const { connectTimeoutMs = DEFAULT_DB_BOUNDS.connectTimeoutMs, poolWaitMs = DEFAULT_DB_BOUNDS.poolWaitMs } = opts;
  class BoundedClient extends pg.Client {
    constructor(config?: pg.ClientConfig) {
      super({ ...config, connectionTimeoutMillis: connectTimeoutMs });
    }
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max,
    // Off in pg-pool: it would bound the wait and the connect with one value.
    connectionTimeoutMillis: 0,
    idleTimeoutMillis: 30_000,
    application_name: 'svc-portal',
    Client: BoundedClient,
  });
  pool.on('connect', (client) =>
    client.on('error', (err) =>
      opts.logger.warn(
        { err: { message: err.message, code: (err as { code?: string }).code } },
        'database connection failed',
      ),
    ),
  );
  // pg-pool re-emits an idle connection's error here; the listener above has logged it.
  pool.on('error', () => undefined);
  boundCheckouts(pool, opts.max, poolWaitMs, opts.onAcquire);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { pool, db, close: () => db.destroy() };
}

type ConnectCallback = (err: Error | undefined, client: pg.PoolClient | undefined, release: () => void) => void;

/**
 * A checkout that finds every connection busy waits at most `poolWaitMs`, then fails with
 * DatabaseBusyError; the connection it would have got is handed back at once when it comes.
 * Each checkout is timed for `onAcquire` too (pg's Pool has no event for how long a caller
 * waited). Both forms are wrapped, since `pool.query` checks out through the callback form.
 */
function boundCheckouts(pool: pg.Pool, max: number, poolWaitMs: number, onAcquire?: (seconds: number) => void): void {
  const connect = pool.connect.bind(pool) as (cb: ConnectCallback) => void;
  const checkout = (cb: ConnectCallback): void => {
    const started = performance.now();
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const settle = (err: Error | undefined, client: pg.PoolClient | undefined, release: () => void) => {
      settled = true;
      clearTimeout(timer);
      onAcquire?.((performance.now() - started) / 1000);
      cb(err, client, release);
    };
    // Only a checkout that has to queue waits; one that opens a connection has the connect bound.
    const queued = pool.totalCount >= max && pool.idleCount === 0;
    if (queued)
      timer = setTimeout(() => settle(new DatabaseBusyError(poolWaitMs), undefined, () => undefined), poolWaitMs);
    connect((err, client, release) => {
      if (!settled) settle(err, client, release);
      else if (client !== undefined) release();
    });
  };
  pool.connect = ((cb?: ConnectCallback) => {
    if (cb !== undefined) return checkout(cb);
    return new Promise<pg.PoolClient>((resolve, reject) =>
      checkout((err, client) => (err !== undefined || client === undefined ? reject(err) : resolve(client))),
    );
  }) as typeof pool.connect;
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

/** True when every pooled connection stayed busy for the whole wait (a DatabaseBusyError, also inside an AggregateError). */
export function isDatabaseBusy(err: unknown): boolean {
  if (err instanceof DatabaseBusyError) return true;
  return err instanceof AggregateError && err.errors.some(isDatabaseBusy);
}

/** True when an error means "the database cannot be used right now" (down or busy) rather than a bug. */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err instanceof DatabaseBusyError) return true;
  const code = (err as { code?: string }).code;
  if (code !== undefined && UNAVAILABLE_CODES.has(code)) return true;
  // The embedded server's Unix socket file is gone while it is stopped (not any other ENOENT).
  if (code === 'ENOENT' && (err as { syscall?: string }).syscall === 'connect') return true;
  if (err instanceof AggregateError) return err.errors.some(isDatabaseUnavailable);
  // `timeout expired`: pg.Client's own connect timeout (SVC_DB_CONNECT_TIMEOUT_MS).
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connection terminated unexpectedly|^timeout expired$/i.test(
    err.message,
  );
}

/** A transaction the database gave up on because of another one (serialisation failure, deadlock): worth one more try. */
export function isDatabaseConflict(err: unknown): boolean {
  const code = err instanceof Error ? (err as { code?: string }).code : undefined;
  return code === '40001' || code === '40P01';
}
