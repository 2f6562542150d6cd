import { ConfigError, type Env, integer } from './parse.ts';

/** Who may hold the portal's connections (docs/security.md#requests-and-connections). */
export interface ConnectionLimits {
  /** Open connections from one address (an IPv6 /64) at most; same rule as the global cap, within the address. */
  maxConnectionsPerAddress: number;
  /**
   * A request whose body brings fewer bytes per second than this over a window is slow: at
   * the caps it may be displaced like an idle connection (0: never slow).
   */
  slowRequestBytesPerSecond: number;
  /** The window over which that rate is measured, from the end of the headers; the first is the grace period. */
  slowRequestWindowSeconds: number;
}

/**
 * 20 per address (was 100): filling the default 1,000 connections with
 * busy ones then takes 50 addresses, not 12 as in the review's lockout. A browser opens at
 * most 6 connections to a host, an agent or `svc upload` one, and idle ones always give way.
 */
const DEFAULT_PER_ADDRESS = 20;

/** SVC_MAX_CONNECTIONS_PER_ADDRESS, SVC_SLOW_REQUEST_BYTES_PER_SECOND, SVC_SLOW_REQUEST_WINDOW_SECONDS. */
export function connectionLimits(env: Env, maxConnections: number): ConnectionLimits {
  // The default follows a lowered cap; an explicit value above it is refused.
  const perAddress = integer(
    env,
    'SVC_MAX_CONNECTIONS_PER_ADDRESS',
    Math.min(DEFAULT_PER_ADDRESS, maxConnections),
    1,
    1_000_000,
  );
  if (perAddress > maxConnections)
    throw new ConfigError(
      'SVC_MAX_CONNECTIONS_PER_ADDRESS',
      `must not exceed SVC_MAX_CONNECTIONS (${maxConnections}; got ${perAddress})`,
    );
  return {
    maxConnectionsPerAddress: perAddress,
    slowRequestBytesPerSecond: integer(env, 'SVC_SLOW_REQUEST_BYTES_PER_SECOND', 1024, 0, 1_000_000_000),
    slowRequestWindowSeconds: integer(env, 'SVC_SLOW_REQUEST_WINDOW_SECONDS', 5, 1, 3600),
  };
}
