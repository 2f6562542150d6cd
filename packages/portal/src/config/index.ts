import { isIP } from 'node:net';
import path from 'node:path';
import ipaddr from 'ipaddr.js';
import { DEFAULT_SCAN_MAX_ADDRESSES, ENVIRONMENTS, SCAN_MAX_ADDRESSES_CEILING } from '@svc/protocol';
import { type BlobStoreConfig, blobStoreConfig } from './blob-store.ts';
import { type ConnectionLimits, connectionLimits } from './connections.ts';
import { metricsConfig, type MetricsConfig } from './metrics.ts';
import { type UploadLimits, uploadLimits } from './uploads.ts';
import { type DatabaseBounds, databaseBounds } from './database.ts';
import { legacyKeyOf } from './legacy-key.ts';
import { ConfigError, type Env, integer, oneOf, read, url } from './parse.ts';

export { ConfigError } from './parse.ts';

/** packages/web/dist, wherever the portal is started from. */
const DEFAULT_WEB_DIR = path.join(import.meta.dirname, '../../../web/dist');

/**
 * Portal configuration (docs/configuration.md). This is the only module that reads
 * `process.env`; everything else receives a `Config`.
 */
export interface Config {
  port: number;
  host: string;
  baseUrl: string;
  dataDir: string;
  /** Where session files live: under the data directory, or in an S3-compatible bucket (SVC_BLOB_URL). */
  blobStore: BlobStoreConfig;
  databaseUrl: string | null;
  /** SVC_EMBEDDED_PG_PORT; null (unset): the embedded server takes a free port, 54329 when it can (db/embedded-port.ts). */
  embeddedPgPort: number | null;
  dbPoolMax: number;
  /** How long opening a database connection, and waiting for a free one, may take (SVC_DB_*_MS). */
  dbBounds: DatabaseBounds;
  /** Heartbeats written together in one statement at most; 0 or 1: each its own statement. */
  heartbeatBatchMax: number;
  legacyApiKey: string | null;
  adminEmail: string | null;
  adminPassword: string | null;
  environment: (typeof ENVIRONMENTS)[number] | 'unknown';
  sessionRetentionDays: number;
  recordRetentionDays: number; // resolved, unseen, undecided records kept (docs/findings-of-record.md#retention); 0: always
  /** Stored session files plus the database, at most (uploads past it: 507); null: no limit. */
  storageLimitMb: number | null;
  /** One client's stored session files at most (uploads and refreshes past it: 413); null: no limit. */
  clientStorageLimitMb: number | null;
  /** The upload size limit and the disk room uploads leave (config/uploads.ts). */
  uploads: UploadLimits;
  logLevel: LogLevel;
  /** One line per request: none, for answers of 400 and above, or for every request (SVC_ACCESS_LOG). */
  accessLog: AccessLogMode;
  /**
   * Whose X-Forwarded-For to believe (Fastify's trustProxy): false (nobody, the socket's
   * address is the client), a number of proxy hops, or the proxies' addresses and CIDR ranges.
   * The client is the rightmost address that is not a trusted proxy. docs/security.md#behind-a-reverse-proxy.
   */
  trustProxy: false | number | string[];
  /** How long SIGTERM waits for in-flight requests before closing their connections. */
  shutdownGraceSeconds: number;
  /**
   * Who may frame uploaded HTML and the share page (CSP frame-ancestors): `'self'` and/or
   * origins. Empty (the default) means nobody: `frame-ancestors 'none'` and X-Frame-Options DENY.
   */
  frameAncestors: string[];
  /** The built web console (packages/web/dist, SVC_WEB_DIR); read on each request, so a later build is picked up. */
  webDir: string;
  /** Minutes a benchmark snapshot is served before the next request rebuilds it (SVC_BENCHMARK_SNAPSHOT_MINUTES). */
  benchmarkSnapshotMinutes: number;
  /** Timeouts and caps on client connections. */
  http: ConnectionLimits & {
    /** Time to receive a request's headers. */
    headersTimeoutSeconds: number;
    /** Time to receive a whole request, headers and body; uploads are exempt (they have only the idle timeout). */
    requestTimeoutSeconds: number;
    /** A connection on which nothing arrives or leaves for this long is closed (a stalled body, an idle socket). */
    idleTimeoutSeconds: number;
    /**
     * Open connections at most; at the cap a new one takes the place of the longest-idle
     * connection (no request in progress), else of a slow one, and is closed only when none is either.
     */
    maxConnections: number;
    /** An idle keep-alive connection is closed after this long (never longer than the idle timeout). */
    keepAliveTimeoutSeconds: number;
    /** Deepest nesting of a JSON body or an uploaded session file. */
    maxJsonDepth: number;
    /** POST /api/upload: the body must be in within this long after the headers. */
    uploadTimeoutSeconds: number;
    /** POST /api/upload: bytes per second at least, over each rate window (0: no minimum). */
    uploadMinBytesPerSecond: number;
    /** The window over which the upload rate is measured; the first one is also the grace period. */
    uploadRateWindowSeconds: number;
    /** Uploads in progress per key at most (the legacy key is one key); more get a 429. */
    uploadsPerKey: number;
  };
  /** Addresses one run_scan or update_schedule target list may cover, summed (SVC_SCAN_MAX_ADDRESSES). */
  scanMaxAddresses: number;
  /** Failed API-key authentications per address per minute before that address gets 429s (0: no limit). */
  keyFailuresPerMinute: number;
  /** External OpenID provider; null means the portal's own identity provider signs tokens. */
  externalJwt: { jwksUrl: string; issuer: string; audience: string; algorithms: string[] } | null;
  /** The portal's own identity provider (docs/identity.md). */
  identity: {
    /** Days from login after which a refresh-token family ends, however often it was rotated. */
    refreshFamilyMaxDays: number;
    /** Failed logins for one e-mail, across all addresses, after which its logins are slowed. */
    loginSlowAfter: number;
    /** The delay added to every password check of such an e-mail. */
    loginSlowDelayMs: number;
    /** 32-byte key that encrypts the signing key at rest; null: the one in <dataDir>/identity-key. */
    keyEncryptionKey: Buffer | null;
  };
  webhooks: {
    /**
     * DANGEROUS: address ranges that webhook URLs may reach although they are not public
     * (e.g. a receiver on the operator's own network). Empty by default.
     */
    allowCidrs: [ipaddr.IPv4 | ipaddr.IPv6, number][];
    /** Extra trusted CA certificates (PEM) for receivers with a private CA. */
    caFile: string | null;
    /** Consecutive failed deliveries after which a subscription is disabled. */
    disableAfterFailures: number;
    /** Deliveries in flight to one receiver origin at most (the bulkhead's ceiling). */
    maxInFlight: number;
    /** Attempts waiting for a slot per receiver origin at most; more are not sent. */
    queueMax: number;
    /** How long an attempt waits for its turn before it is not sent. */
    queueWaitMs: number;
    /** Subscriptions per client_id at most (one without client_id counts on its own). */
    maxPerClient: number;
    /** A delivery's lease: renewed while it runs; once expired, another replica takes it over. */
    leaseSeconds: number;
    /** Runs of a delivery (the first and each takeover) before one without an outcome is abandoned. */
    maxRuns: number;
  };
  metrics: MetricsConfig;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const ACCESS_LOG_MODES = ['off', 'errors', 'all'] as const;
export type AccessLogMode = (typeof ACCESS_LOG_MODES)[number];

function atMost(value: number, name: string, limit: number, limitName: string): number {
  if (value > limit) throw new ConfigError(name, `must not exceed ${limitName} (${limit}; got ${value})`);
  return value;
}

const TRUST_PROXY_FORMS =
  'must be the number of proxies in front of the portal (e.g. 1) or a comma-separated list of their addresses or CIDR ranges (e.g. 127.0.0.1,10.0.0.0/8)';

/**
 * SVC_TRUST_PROXY: unset, 0, false, no or off: no proxy; a hop count; or proxy addresses.
 * `true` trusted every hop, so the leftmost X-Forwarded-For entry, which the client writes
 * itself, was its address: refused at start rather than silently narrowed
 * (docs/decisions.md#client-addresses-behind-proxies).
 */
function trustProxy(env: Env, name: string): Config['trustProxy'] {
  const raw = read(env, name);
  if (raw === undefined || ['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
  if (['true', 'yes', 'on'].includes(raw.toLowerCase()))
    throw new ConfigError(
      name,
      `${TRUST_PROXY_FORMS}; "${raw}" (trust every hop) is no longer accepted: it let clients choose their own address`,
    );
  if (/^\d+$/.test(raw)) {
    const hops = Number(raw);
    if (hops > 32) throw new ConfigError(name, `must be at most 32 proxy hops (got ${hops})`);
    return hops;
  }
  return raw.split(',').map((part) => {
    const entry = part.trim();
    // Dotted quads only for IPv4: ipaddr.js also reads "10.1" or "0x7f.1" as addresses.
    const [v4, v6] = [ipaddr.IPv4, ipaddr.IPv6];
    const valid = entry.includes('/')
      ? entry.includes(':')
        ? v6.isValidCIDR(entry)
        : v4.isValidCIDRFourPartDecimal(entry)
      : entry.includes(':')
        ? v6.isValid(entry)
        : v4.isValidFourPartDecimal(entry);
    if (!valid) throw new ConfigError(name, `${TRUST_PROXY_FORMS} (got "${entry}")`);
    return entry;
  });
}

/** 32 bytes as 64 hex digits or base64 (either alphabet); the value never appears in an error. */
function key32(env: Env, name: string): Buffer | null {
  const raw = read(env, name);
  if (raw === undefined) return null;
  const bytes = /^[0-9a-fA-F]{64}$/.test(raw)
    ? Buffer.from(raw, 'hex')
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(raw)
      ? Buffer.from(raw, 'base64')
      : null;
  if (bytes === null || bytes.length !== 32)
    throw new ConfigError(name, 'must be 32 bytes as 64 hex digits or base64 (e.g. openssl rand -hex 32)');
  return bytes;
}

function cidrList(env: Env, name: string): [ipaddr.IPv4 | ipaddr.IPv6, number][] {
  const raw = read(env, name);
  if (raw === undefined) return [];
  return raw.split(',').map((part) => {
    try {
      return ipaddr.parseCIDR(part.trim());
    } catch {
      throw new ConfigError(
        name,
        `must be a comma-separated list of CIDR ranges such as 127.0.0.0/8 (got "${part.trim()}")`,
      );
    }
  });
}

/** `'self'` (or `self`) and http(s) origins, separated by commas or spaces; anything else is refused. */
function frameAncestorList(env: Env, name: string): string[] {
  const raw = read(env, name);
  if (raw === undefined) return [];
  const out: string[] = [];
  for (const part of raw.split(/[\s,]+/).filter(Boolean)) {
    if (part === "'self'" || part === 'self') {
      out.push("'self'");
      continue;
    }
    let parsed: URL | undefined;
    try {
      parsed = new URL(part);
    } catch {
      parsed = undefined;
    }
    // Only a bare origin: a path, query or credentials would be silently widened or ignored by browsers.
    if (
      parsed === undefined ||
      !['http:', 'https:'].includes(parsed.protocol) ||
      part.replace(/\/$/, '') !== parsed.origin
    ) {
      throw new ConfigError(
        name,
        `must be 'self' or origins such as https://intranet.example.com, separated by commas (got "${part}")`,
      );
    }
    out.push(parsed.origin);
  }
  return [...new Set(out)];
}

export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): Config {
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const host = read(env, 'HOST') ?? '127.0.0.1';
  // An address or a host name to listen on; a URL or "host:port" here would only fail later, at listen.
  if (isIP(host) === 0 && !/^[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$/.test(host))
    throw new ConfigError('HOST', `must be an IP address or a host name (got "${host}")`);
  const explicitBase = url(env, 'SVC_BASE_URL', ['http:', 'https:']);
  if (explicitBase !== undefined) {
    // Everything public (token issuer, share links) is derived by appending paths to it.
    const parsed = new URL(explicitBase);
    if (parsed.search !== '' || parsed.hash !== '' || parsed.username !== '' || parsed.password !== '') {
      throw new ConfigError(
        'SVC_BASE_URL',
        'must be an origin with an optional path, without credentials, query or fragment',
      );
    }
  }
  const baseUrl = (explicitBase ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, '');

  const databaseUrl = url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']) ?? null;

  const legacyApiKey = legacyKeyOf(env);

  const adminEmail = read(env, 'SVC_ADMIN_EMAIL') ?? null;
  const adminPassword = env['SVC_ADMIN_PASSWORD'] ?? null;
  if (adminEmail !== null && !/^[^\s@]+@[^\s@]+$/.test(adminEmail))
    throw new ConfigError('SVC_ADMIN_EMAIL', 'must be an e-mail address');
  if ((adminEmail === null) !== (adminPassword === null || adminPassword === '')) {
    throw new ConfigError(
      adminEmail === null ? 'SVC_ADMIN_EMAIL' : 'SVC_ADMIN_PASSWORD',
      'must be set together with ' + (adminEmail === null ? 'SVC_ADMIN_PASSWORD' : 'SVC_ADMIN_EMAIL'),
    );
  }
  if (adminPassword !== null && adminPassword !== '' && adminPassword.length < 12)
    throw new ConfigError('SVC_ADMIN_PASSWORD', 'must be at least 12 characters long');
  // Its strength is the identity area's rule, checked as the portal starts (identity/bootstrap.ts).

  const jwksUrl = url(env, 'SVC_JWT_JWKS_URL', ['http:', 'https:']);
  const issuer = read(env, 'SVC_JWT_ISSUER');
  const audience = read(env, 'SVC_JWT_AUDIENCE');
  const algorithmsRaw = read(env, 'SVC_JWT_ALGORITHMS');
  let externalJwt: Config['externalJwt'] = null;
  // Any external-provider variable switches verification to that provider; a partial set
  // (including SVC_JWT_ALGORITHMS alone) is refused rather than silently ignored.
  if (jwksUrl !== undefined || issuer !== undefined || audience !== undefined || algorithmsRaw !== undefined) {
    if (jwksUrl === undefined)
      throw new ConfigError(
        'SVC_JWT_JWKS_URL',
        'must be set when SVC_JWT_ISSUER, SVC_JWT_AUDIENCE or SVC_JWT_ALGORITHMS is set',
      );
    if (issuer === undefined) throw new ConfigError('SVC_JWT_ISSUER', 'must be set together with SVC_JWT_JWKS_URL');
    if (audience === undefined) throw new ConfigError('SVC_JWT_AUDIENCE', 'must be set together with SVC_JWT_JWKS_URL');
    const allowed = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
    const algorithms = (algorithmsRaw ?? 'RS256,ES256,EdDSA')
      .split(',')
      .map((a) => a.trim())
      .filter(Boolean);
    const bad = algorithms.find((a) => !allowed.includes(a));
    if (bad !== undefined || algorithms.length === 0)
      throw new ConfigError('SVC_JWT_ALGORITHMS', `must be a comma-separated list of ${allowed.join(', ')}`);
    externalJwt = { jwksUrl, issuer, audience, algorithms };
  }

  const storageLimitRaw = read(env, 'SVC_STORAGE_LIMIT_MB');
  const idleTimeoutSeconds = integer(env, 'SVC_BODY_IDLE_TIMEOUT_SECONDS', 30, 1, 3600);
  const maxConnections = integer(env, 'SVC_MAX_CONNECTIONS', 1000, 1, 1_000_000);
  const requestTimeoutSeconds = integer(env, 'SVC_REQUEST_TIMEOUT_SECONDS', 60, 1, 86_400);
  return {
    port,
    host,
    baseUrl,
    dataDir: path.resolve(cwd, read(env, 'SVC_DATA_DIR') ?? 'data'),
    blobStore: blobStoreConfig(env),
    databaseUrl,
    embeddedPgPort:
      read(env, 'SVC_EMBEDDED_PG_PORT') === undefined ? null : integer(env, 'SVC_EMBEDDED_PG_PORT', 0, 1, 65535),
    dbPoolMax: integer(env, 'SVC_DB_POOL_MAX', 10, 1, 1000),
    dbBounds: databaseBounds(env, requestTimeoutSeconds),
    heartbeatBatchMax: integer(env, 'SVC_HEARTBEAT_BATCH_MAX', 100, 0, 1000),
    legacyApiKey,
    adminEmail,
    adminPassword: adminPassword === '' ? null : adminPassword,
    environment: oneOf(env, 'SVC_ENVIRONMENT', [...ENVIRONMENTS, 'unknown'], 'unknown'),
    sessionRetentionDays: integer(env, 'SVC_SESSION_RETENTION_DAYS', 90, 1, 36500),
    recordRetentionDays: integer(env, 'SVC_RECORD_RETENTION_DAYS', 0, 0, 36500),
    storageLimitMb: storageLimitRaw === undefined ? null : integer(env, 'SVC_STORAGE_LIMIT_MB', 0, 1, 100_000_000),
    clientStorageLimitMb:
      read(env, 'SVC_CLIENT_STORAGE_LIMIT_MB') === undefined
        ? null
        : integer(env, 'SVC_CLIENT_STORAGE_LIMIT_MB', 0, 1, 100_000_000),
    uploads: uploadLimits(env),
    logLevel: oneOf(env, 'SVC_LOG_LEVEL', LOG_LEVELS, 'info'),
    // Errors only by default: a fleet's heartbeats, answered 200, write nothing
    // (docs/decisions.md#one-access-line-per-request-errors-only-by-default).
    accessLog: oneOf(env, 'SVC_ACCESS_LOG', ACCESS_LOG_MODES, 'errors'),
    trustProxy: trustProxy(env, 'SVC_TRUST_PROXY'),
    shutdownGraceSeconds: integer(env, 'SVC_SHUTDOWN_GRACE_SECONDS', 20, 1, 3600),
    frameAncestors: frameAncestorList(env, 'SVC_FRAME_ANCESTORS'),
    webDir: path.resolve(cwd, read(env, 'SVC_WEB_DIR') ?? DEFAULT_WEB_DIR),
    benchmarkSnapshotMinutes: integer(env, 'SVC_BENCHMARK_SNAPSHOT_MINUTES', 60, 1, 10_080),
    identity: {
      refreshFamilyMaxDays: integer(env, 'SVC_REFRESH_FAMILY_MAX_DAYS', 30, 1, 3650),
      loginSlowAfter: integer(env, 'SVC_LOGIN_SLOW_AFTER', 20, 1, 1_000_000),
      loginSlowDelayMs: integer(env, 'SVC_LOGIN_SLOW_DELAY_MS', 2000, 0, 30_000),
      keyEncryptionKey: key32(env, 'SVC_IDENTITY_KEY_ENCRYPTION_KEY'),
    },
    http: {
      headersTimeoutSeconds: integer(env, 'SVC_HEADERS_TIMEOUT_SECONDS', 20, 1, 3600),
      requestTimeoutSeconds,
      idleTimeoutSeconds,
      maxConnections,
      ...connectionLimits(env, maxConnections),
      // The default follows a lowered idle timeout; an explicit value above it is refused.
      keepAliveTimeoutSeconds: atMost(
        integer(env, 'SVC_KEEP_ALIVE_TIMEOUT_SECONDS', Math.min(5, idleTimeoutSeconds), 1, 3600),
        'SVC_KEEP_ALIVE_TIMEOUT_SECONDS',
        idleTimeoutSeconds,
        'SVC_BODY_IDLE_TIMEOUT_SECONDS',
      ),
      maxJsonDepth: integer(env, 'SVC_MAX_JSON_DEPTH', 64, 8, 1000),
      uploadTimeoutSeconds: integer(env, 'SVC_UPLOAD_TIMEOUT_SECONDS', 3600, 1, 86_400),
      uploadMinBytesPerSecond: integer(env, 'SVC_UPLOAD_MIN_BYTES_PER_SECOND', 1024, 0, 1_000_000_000),
      uploadRateWindowSeconds: integer(env, 'SVC_UPLOAD_RATE_WINDOW_SECONDS', 30, 1, 3600),
      uploadsPerKey: integer(env, 'SVC_UPLOADS_PER_KEY', 8, 1, 10_000),
    },
    keyFailuresPerMinute: integer(env, 'SVC_API_KEY_FAILURES_PER_MINUTE', 20, 0, 1_000_000),
    scanMaxAddresses: integer(env, 'SVC_SCAN_MAX_ADDRESSES', DEFAULT_SCAN_MAX_ADDRESSES, 1, SCAN_MAX_ADDRESSES_CEILING),
    webhooks: {
      allowCidrs: cidrList(env, 'SVC_WEBHOOK_ALLOW_CIDRS'),
      caFile:
        read(env, 'SVC_WEBHOOK_CA_FILE') === undefined
          ? null
          : path.resolve(cwd, read(env, 'SVC_WEBHOOK_CA_FILE') as string),
      disableAfterFailures: integer(env, 'SVC_WEBHOOK_DISABLE_AFTER', 20, 1, 100_000),
      maxInFlight: integer(env, 'SVC_WEBHOOK_MAX_IN_FLIGHT', 64, 1, 1024),
      queueMax: integer(env, 'SVC_WEBHOOK_QUEUE_MAX', 1000, 0, 100_000),
      queueWaitMs: integer(env, 'SVC_WEBHOOK_QUEUE_WAIT_SECONDS', 20, 1, 600) * 1000,
      maxPerClient: integer(env, 'SVC_WEBHOOK_MAX_PER_CLIENT', 25, 1, 10_000),
      leaseSeconds: integer(env, 'SVC_WEBHOOK_LEASE_SECONDS', 60, 1, 3600),
      maxRuns: integer(env, 'SVC_WEBHOOK_MAX_RUNS', 3, 1, 100),
    },
    externalJwt,
    metrics: metricsConfig(env, { host, port }),
  };
}
