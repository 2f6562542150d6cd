import { ConfigError, type Env, integer } from './parse.ts';

/**
 * The two bounds on getting a database connection (docs/security.md#requests-and-connections),
 * kept apart because they fail for different reasons: opening a connection stalls when the
 * database cannot be reached, waiting for a free one when every pooled connection is busy.
 */
export interface DatabaseBounds {
  /** Opening one connection (TCP, TLS, authentication) at most. */
  connectTimeoutMs: number;
  /** Waiting for a free pooled connection while all SVC_DB_POOL_MAX are busy, at most. */
  poolWaitMs: number;
}

/** The defaults of docs/configuration.md, also what a pool opened without settings (tests, tools) gets. */
export const DEFAULT_DB_BOUNDS: DatabaseBounds = { connectTimeoutMs: 5_000, poolWaitMs: 10_000 };

/**
 * SVC_DB_CONNECT_TIMEOUT_MS and SVC_DB_POOL_WAIT_MS. A request is itself bounded by
 * SVC_REQUEST_TIMEOUT_SECONDS, so its wait for a connection never exceeds that: the default
 * follows a lower request timeout, and an explicit value above it is refused.
 */
export function databaseBounds(env: Env, requestTimeoutSeconds: number): DatabaseBounds {
  const requestMs = requestTimeoutSeconds * 1000;
  const poolWaitMs = integer(
    env,
    'SVC_DB_POOL_WAIT_MS',
    Math.min(DEFAULT_DB_BOUNDS.poolWaitMs, requestMs),
    1,
    86_400_000,
  );
  if (poolWaitMs > requestMs)
    throw new ConfigError(
      'SVC_DB_POOL_WAIT_MS',
      `must not exceed SVC_REQUEST_TIMEOUT_SECONDS (${requestMs} ms; got ${poolWaitMs})`,
    );
  return {
    connectTimeoutMs: integer(env, 'SVC_DB_CONNECT_TIMEOUT_MS', DEFAULT_DB_BOUNDS.connectTimeoutMs, 100, 600_000),
    poolWaitMs,
  };
}
