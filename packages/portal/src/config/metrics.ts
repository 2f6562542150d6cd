import { isIP } from 'node:net';
import { ConfigError, integer } from './parse.ts';

type Env = Record<string, string | undefined>;

/** GET /metrics (docs/metrics.md): off unless one of its settings is given. */
export interface MetricsConfig {
  /** Bearer token that GET /metrics on the portal's own port asks for; null: not served there (404). */
  token: string | null;
  /** A second listener that serves only GET /metrics, without a token (a private network); null: none. */
  listen: { host: string; port: number } | null;
  /**
   * SVC_BACKUP_MAX_AGE_HOURS: the age past which the last `npm run backup` is overdue, exported as
   * svc_backup_max_age_seconds beside the backup's time so the alert rule holds no threshold of
   * its own; 0: backups are not watched (neither gauge is exported).
   */
  backupMaxAgeHours: number;
}

const LISTEN_FORM = 'must be host:port, e.g. 10.0.0.5:9464 or [::1]:9464';

/** `host:port` or `[v6]:port`; the host an address or a name, the port 0 (any free one) to 65535. */
function listenAddress(raw: string): MetricsConfig['listen'] {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(raw);
  const host = m?.[1] ?? m?.[2];
  const port = Number(m?.[3]);
  if (m === null || host === undefined || port > 65535)
    throw new ConfigError('SVC_METRICS_LISTEN', `${LISTEN_FORM} (got "${raw}")`);
  const name = /^[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$/.test(host);
  if ((m[1] !== undefined && isIP(host) !== 6) || (m[2] !== undefined && isIP(host) !== 4 && !name))
    throw new ConfigError('SVC_METRICS_LISTEN', `${LISTEN_FORM} (got "${raw}")`);
  return { host, port };
}

/**
 * SVC_METRICS_TOKEN and SVC_METRICS_LISTEN. The token's value never appears in an error: a
 * message says what is wrong with it, not what it is.
 */
export function metricsConfig(env: Env, portal: { host: string; port: number }): MetricsConfig {
  const token = env['SVC_METRICS_TOKEN']?.trim() || null;
  if (token !== null && (token.length < 32 || !/^[\x21-\x7e]+$/.test(token)))
    throw new ConfigError(
      'SVC_METRICS_TOKEN',
      'must be at least 32 printable characters without spaces (e.g. openssl rand -hex 32)',
    );
  const raw = env['SVC_METRICS_LISTEN']?.trim() || null;
  const listen = raw === null ? null : listenAddress(raw);
  if (listen !== null && listen.port !== 0 && listen.port === portal.port && listen.host === portal.host)
    throw new ConfigError('SVC_METRICS_LISTEN', `must differ from the portal's own address (HOST:PORT, ${raw})`);
  return { token, listen, backupMaxAgeHours: integer(env, 'SVC_BACKUP_MAX_AGE_HOURS', 26, 0, 87_600) };
}
