import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config/index.ts';
import { freePort } from '@svc/test-support/ports';
import { killAll, makeDataDir, spawnPortal, waitForExit } from '@svc/test-support/portal-process';

/** Portal configuration (docs/configuration.md and the extras of src/config/index.ts). */

const CWD = '/srv/portal';
const ADMIN = { SVC_ADMIN_EMAIL: 'root@example.com', SVC_ADMIN_PASSWORD: 'correct horse battery' };
const EXTERNAL = {
  SVC_JWT_JWKS_URL: 'https://idp.example.com/.well-known/jwks.json',
  SVC_JWT_ISSUER: 'https://idp.example.com/',
  SVC_JWT_AUDIENCE: 'svc',
};

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env, CWD);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error(`no ConfigError for ${JSON.stringify(env)}`);
}

describe('loadConfig defaults', () => {
  it('gives the docs/configuration.md defaults for an empty environment', () => {
    const config = loadConfig({}, CWD);
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      baseUrl: 'http://127.0.0.1:8080',
      dataDir: '/srv/portal/data',
      databaseUrl: null,
      // Unset: the embedded server takes a free port, 54329 when it can (tests/embedded-port.slow.test.ts).
      embeddedPgPort: null,
      dbPoolMax: 10,
      legacyApiKey: null,
      adminEmail: null,
      adminPassword: null,
      environment: 'unknown',
      sessionRetentionDays: 90,
      storageLimitMb: null,
      logLevel: 'info',
      accessLog: 'errors',
      trustProxy: false,
      shutdownGraceSeconds: 20,
      benchmarkSnapshotMinutes: 60,
      http: {
        headersTimeoutSeconds: 20,
        requestTimeoutSeconds: 60,
        idleTimeoutSeconds: 30,
        maxConnections: 1000,
        maxJsonDepth: 64,
      },
      keyFailuresPerMinute: 20,
      externalJwt: null,
    });
  });

  it('treats empty and blank values as unset', () => {
    const config = loadConfig(
      {
        PORT: '',
        HOST: '  ',
        SVC_LOG_LEVEL: ' ',
        SVC_ENVIRONMENT: '',
        DATABASE_URL: '',
        SVC_UPLOAD_API_KEY: '  ',
        SVC_ADMIN_EMAIL: '',
        SVC_ADMIN_PASSWORD: '',
      },
      CWD,
    );
    expect(config.port).toBe(8080);
    expect(config.host).toBe('127.0.0.1');
    expect(config.logLevel).toBe('info');
    expect(config.environment).toBe('unknown');
    expect(config.databaseUrl).toBeNull();
    expect(config.legacyApiKey).toBeNull();
    expect(config.adminEmail).toBeNull();
    expect(config.adminPassword).toBeNull();
  });

  it('reads process.env and process.cwd() when called without arguments', () => {
    const config = loadConfig();
    expect(config.dataDir).toBe(path.resolve(process.cwd(), process.env['SVC_DATA_DIR']?.trim() || 'data'));
  });
});

describe('loadConfig valid values', () => {
  it('reads every variable', () => {
    const config = loadConfig(
      {
        PORT: ' 9090 ',
        HOST: '0.0.0.0',
        SVC_BASE_URL: 'https://portal.example.com/svc/',
        SVC_DATA_DIR: 'var/svc',
        DATABASE_URL: 'postgresql://svc:pw@db.internal:5432/svc?sslmode=require',
        SVC_EMBEDDED_PG_PORT: '55432',
        SVC_DB_POOL_MAX: '25',
        SVC_UPLOAD_API_KEY: 'legacy-key-0123456789-0123456789-0123',
        SVC_ADMIN_EMAIL: ' root@example.com ',
        SVC_ADMIN_PASSWORD: ' correct horse battery ',
        SVC_ENVIRONMENT: 'production',
        SVC_SESSION_RETENTION_DAYS: '30',
        SVC_STORAGE_LIMIT_MB: '512',
        SVC_LOG_LEVEL: 'debug',
        SVC_ACCESS_LOG: 'all',
        SVC_TRUST_PROXY: '2',
        SVC_SHUTDOWN_GRACE_SECONDS: '5',
        SVC_BENCHMARK_SNAPSHOT_MINUTES: '15',
        SVC_HEADERS_TIMEOUT_SECONDS: '5',
        SVC_REQUEST_TIMEOUT_SECONDS: '120',
        SVC_BODY_IDLE_TIMEOUT_SECONDS: '15',
        SVC_MAX_CONNECTIONS: '200',
        SVC_MAX_JSON_DEPTH: '100',
        SVC_API_KEY_FAILURES_PER_MINUTE: '0',
        ...EXTERNAL,
        SVC_JWT_ALGORITHMS: 'ES256, EdDSA',
      },
      CWD,
    );
    expect(config).toMatchObject({
      port: 9090,
      host: '0.0.0.0',
      baseUrl: 'https://portal.example.com/svc',
      dataDir: '/srv/portal/var/svc',
      databaseUrl: 'postgresql://svc:pw@db.internal:5432/svc?sslmode=require',
      embeddedPgPort: 55432,
      dbPoolMax: 25,
      legacyApiKey: 'legacy-key-0123456789-0123456789-0123',
      adminEmail: 'root@example.com',
      // A password is taken as written: leading and trailing spaces are part of it.
      adminPassword: ' correct horse battery ',
      environment: 'production',
      sessionRetentionDays: 30,
      storageLimitMb: 512,
      logLevel: 'debug',
      accessLog: 'all',
      trustProxy: 2,
      shutdownGraceSeconds: 5,
      benchmarkSnapshotMinutes: 15,
      http: {
        headersTimeoutSeconds: 5,
        requestTimeoutSeconds: 120,
        idleTimeoutSeconds: 15,
        maxConnections: 200,
        maxJsonDepth: 100,
      },
      keyFailuresPerMinute: 0,
      externalJwt: {
        jwksUrl: EXTERNAL.SVC_JWT_JWKS_URL,
        issuer: EXTERNAL.SVC_JWT_ISSUER,
        audience: 'svc',
        algorithms: ['ES256', 'EdDSA'],
      },
    });
  });

  it('PORT 0 (a free port) and the edges of its range', () => {
    expect(loadConfig({ PORT: '0' }, CWD).port).toBe(0);
    expect(loadConfig({ PORT: '65535' }, CWD).port).toBe(65535);
  });

  it('derives the base URL from HOST and PORT, bracketing IPv6', () => {
    expect(loadConfig({ HOST: '::1', PORT: '8443' }, CWD).baseUrl).toBe('http://[::1]:8443');
    expect(loadConfig({ HOST: 'portal.internal' }, CWD).baseUrl).toBe('http://portal.internal:8080');
  });

  it('keeps an absolute SVC_DATA_DIR and resolves a relative one against the working directory', () => {
    expect(loadConfig({ SVC_DATA_DIR: '/var/lib/svc' }, CWD).dataDir).toBe('/var/lib/svc');
    expect(loadConfig({ SVC_DATA_DIR: '../shared' }, CWD).dataDir).toBe('/srv/shared');
  });

  it('accepts postgres: and postgresql: database URLs', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://u:p@h/db' }, CWD).databaseUrl).toBe('postgres://u:p@h/db');
    expect(loadConfig({ DATABASE_URL: 'postgresql://h/db' }, CWD).databaseUrl).toBe('postgresql://h/db');
  });

  it.each(['production', 'deploy-preview', 'branch-deploy', 'dev', 'unknown'])('SVC_ENVIRONMENT=%s', (value) => {
    expect(loadConfig({ SVC_ENVIRONMENT: value }, CWD).environment).toBe(value);
  });

  it.each(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])('SVC_LOG_LEVEL=%s', (value) => {
    expect(loadConfig({ SVC_LOG_LEVEL: value }, CWD).logLevel).toBe(value);
  });

  it('external provider with the default algorithms', () => {
    expect(loadConfig(EXTERNAL, CWD).externalJwt).toEqual({
      jwksUrl: EXTERNAL.SVC_JWT_JWKS_URL,
      issuer: EXTERNAL.SVC_JWT_ISSUER,
      audience: 'svc',
      algorithms: ['RS256', 'ES256', 'EdDSA'],
    });
  });

  it('admin e-mail and password together', () => {
    const config = loadConfig(ADMIN, CWD);
    expect(config.adminEmail).toBe('root@example.com');
    expect(config.adminPassword).toBe('correct horse battery');
  });
});

describe('SVC_FRAME_ANCESTORS (who may frame uploaded HTML and the share page)', () => {
  it('defaults to nobody', () => {
    expect(loadConfig({}, CWD).frameAncestors).toEqual([]);
    expect(loadConfig({ SVC_FRAME_ANCESTORS: ' ' }, CWD).frameAncestors).toEqual([]);
  });

  it("reads 'self' and origins, separated by commas or spaces, without duplicates", () => {
    expect(
      loadConfig({ SVC_FRAME_ANCESTORS: "'self', https://intranet.example.com  http://127.0.0.1:8080/ self" }, CWD)
        .frameAncestors,
    ).toEqual(["'self'", 'https://intranet.example.com', 'http://127.0.0.1:8080']);
  });

  it.each([
    ['a path', 'https://intranet.example.com/reports'],
    ['a wildcard', '*'],
    ['a keyword other than self', "'none'"],
    ['a scheme other than http(s)', 'ftp://files.example.com'],
    ['credentials', 'https://u:p@intranet.example.com'],
    ['a bare host', 'intranet.example.com'],
  ])('refuses %s', (_name, value) => {
    const err = configError({ SVC_FRAME_ANCESTORS: value });
    expect(err.variable).toBe('SVC_FRAME_ANCESTORS');
    expect(err.message).toMatch(/must be 'self' or origins such as https:\/\/intranet\.example\.com/);
  });
});

describe('loadConfig invalid values: a ConfigError naming the variable', () => {
  const cases: [string, Record<string, string>, string, RegExp][] = [
    ['PORT not a number', { PORT: 'abc' }, 'PORT', /must be a whole number between 0 and 65535 \(got "abc"\)/],
    ['PORT too large', { PORT: '70000' }, 'PORT', /must be between 0 and 65535 \(got 70000\)/],
    ['PORT negative', { PORT: '-1' }, 'PORT', /whole number/],
    ['PORT fractional', { PORT: '80.5' }, 'PORT', /whole number/],
    ['PORT exponent', { PORT: '1e3' }, 'PORT', /whole number/],
    ['HOST a URL', { HOST: 'http://0.0.0.0' }, 'HOST', /must be an IP address or a host name/],
    ['HOST with a port', { HOST: '127.0.0.1:8080' }, 'HOST', /must be an IP address or a host name/],
    ['SVC_BASE_URL ftp', { SVC_BASE_URL: 'ftp://x' }, 'SVC_BASE_URL', /must use http: or https:/],
    ['SVC_BASE_URL not a URL', { SVC_BASE_URL: 'portal.example.com' }, 'SVC_BASE_URL', /must be a URL/],
    [
      'SVC_BASE_URL with a query',
      { SVC_BASE_URL: 'https://portal.example.com/?x=1' },
      'SVC_BASE_URL',
      /without credentials, query or fragment/,
    ],
    [
      'SVC_BASE_URL with credentials',
      { SVC_BASE_URL: 'https://u:p@portal.example.com' },
      'SVC_BASE_URL',
      /without credentials, query or fragment/,
    ],
    ['DATABASE_URL mysql', { DATABASE_URL: 'mysql://x' }, 'DATABASE_URL', /must use postgres: or postgresql:/],
    [
      'DATABASE_URL not a URL',
      { DATABASE_URL: 'localhost:5432' },
      'DATABASE_URL',
      /must use postgres: or postgresql:|must be a URL/,
    ],
    ['SVC_EMBEDDED_PG_PORT 0', { SVC_EMBEDDED_PG_PORT: '0' }, 'SVC_EMBEDDED_PG_PORT', /must be between 1 and 65535/],
    ['SVC_EMBEDDED_PG_PORT text', { SVC_EMBEDDED_PG_PORT: 'pg' }, 'SVC_EMBEDDED_PG_PORT', /whole number/],
    ['SVC_DB_POOL_MAX 0', { SVC_DB_POOL_MAX: '0' }, 'SVC_DB_POOL_MAX', /must be between 1 and 1000/],
    [
      'SVC_ENVIRONMENT staging',
      { SVC_ENVIRONMENT: 'staging' },
      'SVC_ENVIRONMENT',
      /must be one of production, deploy-preview, branch-deploy, dev, unknown \(got "staging"\)/,
    ],
    ['SVC_ENVIRONMENT case', { SVC_ENVIRONMENT: 'Production' }, 'SVC_ENVIRONMENT', /must be one of/],
    [
      'SVC_LOG_LEVEL loud',
      { SVC_LOG_LEVEL: 'loud' },
      'SVC_LOG_LEVEL',
      /must be one of fatal, error, warn, info, debug, trace, silent \(got "loud"\)/,
    ],
    [
      'SVC_ACCESS_LOG on',
      { SVC_ACCESS_LOG: 'on' },
      'SVC_ACCESS_LOG',
      /^Invalid configuration: SVC_ACCESS_LOG must be one of off, errors, all \(got "on"\)$/,
    ],
    [
      'SVC_SESSION_RETENTION_DAYS 0',
      { SVC_SESSION_RETENTION_DAYS: '0' },
      'SVC_SESSION_RETENTION_DAYS',
      /must be between 1 and 36500 \(got 0\)/,
    ],
    [
      'SVC_SESSION_RETENTION_DAYS text',
      { SVC_SESSION_RETENTION_DAYS: 'ninety' },
      'SVC_SESSION_RETENTION_DAYS',
      /whole number/,
    ],
    [
      'SVC_UPLOAD_API_KEY too short',
      { SVC_UPLOAD_API_KEY: 'short-key' },
      'SVC_UPLOAD_API_KEY',
      /must be at least 16 characters long \(32 or more recommended\)/,
    ],
    [
      'SVC_UPLOAD_API_KEY 15 characters',
      { SVC_UPLOAD_API_KEY: 'k'.repeat(15) },
      'SVC_UPLOAD_API_KEY',
      /must be at least 16 characters long/,
    ],
    [
      'SVC_HEADERS_TIMEOUT_SECONDS 0',
      { SVC_HEADERS_TIMEOUT_SECONDS: '0' },
      'SVC_HEADERS_TIMEOUT_SECONDS',
      /must be between 1 and 3600/,
    ],
    [
      'SVC_REQUEST_TIMEOUT_SECONDS text',
      { SVC_REQUEST_TIMEOUT_SECONDS: '1m' },
      'SVC_REQUEST_TIMEOUT_SECONDS',
      /whole number/,
    ],
    [
      'SVC_BODY_IDLE_TIMEOUT_SECONDS 0',
      { SVC_BODY_IDLE_TIMEOUT_SECONDS: '0' },
      'SVC_BODY_IDLE_TIMEOUT_SECONDS',
      /must be between 1 and 3600/,
    ],
    ['SVC_MAX_CONNECTIONS 0', { SVC_MAX_CONNECTIONS: '0' }, 'SVC_MAX_CONNECTIONS', /must be between 1 and 1000000/],
    ['SVC_MAX_JSON_DEPTH 5000', { SVC_MAX_JSON_DEPTH: '5000' }, 'SVC_MAX_JSON_DEPTH', /must be between 8 and 1000/],
    [
      'SVC_API_KEY_FAILURES_PER_MINUTE -1',
      { SVC_API_KEY_FAILURES_PER_MINUTE: '-1' },
      'SVC_API_KEY_FAILURES_PER_MINUTE',
      /whole number/,
    ],
    [
      'SVC_ADMIN_EMAIL without password',
      { SVC_ADMIN_EMAIL: 'root@example.com' },
      'SVC_ADMIN_PASSWORD',
      /must be set together with SVC_ADMIN_EMAIL/,
    ],
    [
      'SVC_ADMIN_PASSWORD without e-mail',
      { SVC_ADMIN_PASSWORD: 'correct horse battery' },
      'SVC_ADMIN_EMAIL',
      /must be set together with SVC_ADMIN_PASSWORD/,
    ],
    [
      'SVC_ADMIN_EMAIL not an address',
      { ...ADMIN, SVC_ADMIN_EMAIL: 'root' },
      'SVC_ADMIN_EMAIL',
      /must be an e-mail address/,
    ],
    [
      'SVC_ADMIN_PASSWORD too short',
      { ...ADMIN, SVC_ADMIN_PASSWORD: 'short' },
      'SVC_ADMIN_PASSWORD',
      /must be at least 12 characters long/,
    ],
    [
      'SVC_JWT_ISSUER alone',
      { SVC_JWT_ISSUER: EXTERNAL.SVC_JWT_ISSUER },
      'SVC_JWT_JWKS_URL',
      /must be set when SVC_JWT_ISSUER/,
    ],
    ['SVC_JWT_AUDIENCE alone', { SVC_JWT_AUDIENCE: 'svc' }, 'SVC_JWT_JWKS_URL', /must be set when/],
    ['SVC_JWT_ALGORITHMS alone', { SVC_JWT_ALGORITHMS: 'RS256' }, 'SVC_JWT_JWKS_URL', /SVC_JWT_ALGORITHMS is set/],
    [
      'SVC_JWT_JWKS_URL without issuer',
      { SVC_JWT_JWKS_URL: EXTERNAL.SVC_JWT_JWKS_URL, SVC_JWT_AUDIENCE: 'svc' },
      'SVC_JWT_ISSUER',
      /must be set together with SVC_JWT_JWKS_URL/,
    ],
    [
      'SVC_JWT_JWKS_URL without audience',
      { SVC_JWT_JWKS_URL: EXTERNAL.SVC_JWT_JWKS_URL, SVC_JWT_ISSUER: 'x' },
      'SVC_JWT_AUDIENCE',
      /must be set together with SVC_JWT_JWKS_URL/,
    ],
    [
      'SVC_JWT_JWKS_URL not http(s)',
      { ...EXTERNAL, SVC_JWT_JWKS_URL: 'file:///etc/jwks.json' },
      'SVC_JWT_JWKS_URL',
      /must use http: or https:/,
    ],
    [
      'SVC_JWT_ALGORITHMS HS256',
      { ...EXTERNAL, SVC_JWT_ALGORITHMS: 'HS256' },
      'SVC_JWT_ALGORITHMS',
      /must be a comma-separated list of RS256/,
    ],
    [
      'SVC_JWT_ALGORITHMS none',
      { ...EXTERNAL, SVC_JWT_ALGORITHMS: 'none' },
      'SVC_JWT_ALGORITHMS',
      /comma-separated list/,
    ],
    [
      'SVC_JWT_ALGORITHMS empty list',
      { ...EXTERNAL, SVC_JWT_ALGORITHMS: ' , ' },
      'SVC_JWT_ALGORITHMS',
      /comma-separated list/,
    ],
    ['SVC_TRUST_PROXY maybe', { SVC_TRUST_PROXY: 'maybe' }, 'SVC_TRUST_PROXY', /number of proxies .*\(got "maybe"\)/],
    ['SVC_STORAGE_LIMIT_MB text', { SVC_STORAGE_LIMIT_MB: 'x' }, 'SVC_STORAGE_LIMIT_MB', /whole number/],
    ['SVC_STORAGE_LIMIT_MB 0', { SVC_STORAGE_LIMIT_MB: '0' }, 'SVC_STORAGE_LIMIT_MB', /must be between 1 and/],
    [
      'SVC_SHUTDOWN_GRACE_SECONDS 0',
      { SVC_SHUTDOWN_GRACE_SECONDS: '0' },
      'SVC_SHUTDOWN_GRACE_SECONDS',
      /must be between 1 and 3600/,
    ],
    [
      'SVC_BENCHMARK_SNAPSHOT_MINUTES 0',
      { SVC_BENCHMARK_SNAPSHOT_MINUTES: '0' },
      'SVC_BENCHMARK_SNAPSHOT_MINUTES',
      /must be between 1 and 10080/,
    ],
    [
      'SVC_BENCHMARK_SNAPSHOT_MINUTES text',
      { SVC_BENCHMARK_SNAPSHOT_MINUTES: 'hourly' },
      'SVC_BENCHMARK_SNAPSHOT_MINUTES',
      /whole number/,
    ],
  ];

  it.each(cases)('%s', (_name, env, variable, problem) => {
    const err = configError(env);
    expect(err.name).toBe('ConfigError');
    expect(err.variable).toBe(variable);
    expect(err.message.startsWith(`Invalid configuration: ${variable} `)).toBe(true);
    expect(err.message).toMatch(problem);
    expect(err.message).not.toContain('\n');
  });

  it('never echoes a secret value in the error', () => {
    const secret = 'S3cr3t-v';
    const messages = [
      configError({ SVC_UPLOAD_API_KEY: secret }).message,
      configError({ SVC_ADMIN_EMAIL: 'root@example.com', SVC_ADMIN_PASSWORD: secret }).message,
      configError({ SVC_ADMIN_PASSWORD: `${secret}-long-enough` }).message,
      configError({ DATABASE_URL: `mysql://svc:${secret}@db/svc` }).message,
      configError({ DATABASE_URL: `svc:${secret}@db/svc` }).message,
      configError({ SVC_BASE_URL: `https://u:${secret}@portal.example.com` }).message,
      configError({ ...EXTERNAL, SVC_JWT_JWKS_URL: `ftp://u:${secret}@idp.example.com/jwks` }).message,
    ];
    expect(messages).toHaveLength(7);
    for (const m of messages) expect(m).not.toContain(secret);
  });
});

describe('the configuration module is the only reader of process.env (docs/configuration.md)', () => {
  it('no file under packages/portal/src outside config/ mentions process.env', async () => {
    const src = fileURLToPath(new URL('../src/', import.meta.url));
    const entries = await fs.readdir(src, { recursive: true, withFileTypes: true });
    const files = entries
      .filter((e) => e.isFile() && /\.[cm]?[jt]sx?$/.test(e.name))
      .map((e) => path.join(e.parentPath, e.name));
    expect(files.length).toBeGreaterThan(10);
    expect(files).toContain(path.join(src, 'config', 'index.ts'));
    const offenders: string[] = [];
    for (const file of files) {
      const rel = path.relative(src, file);
      if (rel.startsWith(`config${path.sep}`)) continue;
      const text = await fs.readFile(file, 'utf8');
      // `process.env`, `process['env']`, `process["env"]`, and `const { env } = process`.
      if (/process\s*(?:\.\s*env\b|\[\s*['"`]env['"`]\s*\])|\{[^}]*\benv\b[^}]*\}\s*=\s*process\b/.test(text))
        offenders.push(rel);
    }
    expect(offenders).toEqual([]);
  });
});

describe('a real portal process with an invalid configuration', () => {
  afterAll(() => killAll());

  it('a legacy key shorter than 16 characters exits with code 2 and one line naming SVC_UPLOAD_API_KEY', async () => {
    const p = await spawnPortal({
      dataDir: await makeDataDir('svc-config-'),
      env: { SVC_UPLOAD_API_KEY: 'fifteen-chars!!' },
    });
    const exit = await waitForExit(p, 30_000);
    expect(exit).toEqual({ code: 2, signal: null });
    expect(p.stderr()).toBe(
      'Invalid configuration: SVC_UPLOAD_API_KEY must be at least 16 characters long (32 or more recommended)\n',
    );
    expect(p.stderr()).not.toContain('fifteen-chars!!');
  });

  it('PORT=abc exits with code 2 and one line on stderr naming PORT', async () => {
    const p = await spawnPortal({ dataDir: await makeDataDir('svc-config-'), env: { PORT: 'abc' } });
    const exit = await waitForExit(p, 30_000);
    expect(exit).toEqual({ code: 2, signal: null });
    expect(p.stderr()).toBe('Invalid configuration: PORT must be a whole number between 0 and 65535 (got "abc")\n');
    expect(p.stdout()).toBe('');
  });

  it('an unreachable DATABASE_URL exits with code 1 without printing its password', async () => {
    const dbPort = await freePort();
    const p = await spawnPortal({
      dataDir: await makeDataDir('svc-config-'),
      env: { DATABASE_URL: `postgres://svc:Db-Pa55word-xyz@127.0.0.1:${dbPort}/svc` },
    });
    const exit = await waitForExit(p, 60_000);
    expect(exit).toEqual({ code: 1, signal: null });
    expect(p.stderr()).toMatch(/^The portal failed to start: .*ECONNREFUSED/);
    expect(p.stderr() + p.stdout()).not.toContain('Db-Pa55word-xyz');
  });
});

describe('webhook limits (SVC_WEBHOOK_MAX_IN_FLIGHT, _QUEUE_MAX, _QUEUE_WAIT_SECONDS, _MAX_PER_CLIENT)', () => {
  it('defaults: 64 in flight per receiver, 1000 waiting, 20 s wait, 25 subscriptions per client', () => {
    expect(loadConfig({}, CWD).webhooks).toMatchObject({
      maxInFlight: 64,
      queueMax: 1000,
      queueWaitMs: 20_000,
      maxPerClient: 25,
    });
  });

  it('reads each variable', () => {
    const env = {
      SVC_WEBHOOK_MAX_IN_FLIGHT: '8',
      SVC_WEBHOOK_QUEUE_MAX: '0',
      SVC_WEBHOOK_QUEUE_WAIT_SECONDS: '3',
      SVC_WEBHOOK_MAX_PER_CLIENT: '2',
    };
    expect(loadConfig(env, CWD).webhooks).toMatchObject({
      maxInFlight: 8,
      queueMax: 0,
      queueWaitMs: 3000,
      maxPerClient: 2,
    });
  });

  it.each([
    ['SVC_WEBHOOK_MAX_IN_FLIGHT', '0', /must be between 1 and 1024 \(got 0\)/],
    ['SVC_WEBHOOK_MAX_IN_FLIGHT', 'many', /whole number/],
    ['SVC_WEBHOOK_QUEUE_MAX', '-1', /whole number/],
    ['SVC_WEBHOOK_QUEUE_MAX', '100001', /must be between 0 and 100000/],
    ['SVC_WEBHOOK_QUEUE_WAIT_SECONDS', '0', /must be between 1 and 600 \(got 0\)/],
    ['SVC_WEBHOOK_QUEUE_WAIT_SECONDS', '1.5', /whole number/],
    ['SVC_WEBHOOK_MAX_PER_CLIENT', '0', /must be between 1 and 10000 \(got 0\)/],
  ])('%s=%s is refused', (variable, value, problem) => {
    const err = configError({ [variable]: value });
    expect(err.variable).toBe(variable);
    expect(err.message).toMatch(problem);
  });
});

describe('connection and upload limits', () => {
  it('defaults: 20 connections per address, slow below 1 KiB/s over 5 s, keep-alive 5 s, uploads within an hour at 1 KiB/s over 30 s, 8 per key', () => {
    expect(loadConfig({}, CWD).http).toMatchObject({
      maxConnectionsPerAddress: 20,
      slowRequestBytesPerSecond: 1024,
      slowRequestWindowSeconds: 5,
      keepAliveTimeoutSeconds: 5,
      uploadTimeoutSeconds: 3600,
      uploadMinBytesPerSecond: 1024,
      uploadRateWindowSeconds: 30,
      uploadsPerKey: 8,
    });
  });

  it('the per-address and keep-alive defaults follow a lower cap and idle timeout', () => {
    const config = loadConfig({ SVC_MAX_CONNECTIONS: '12', SVC_BODY_IDLE_TIMEOUT_SECONDS: '3' }, CWD);
    expect(config.http).toMatchObject({ maxConnectionsPerAddress: 12, keepAliveTimeoutSeconds: 3 });
  });

  it('reads each variable', () => {
    const env = {
      SVC_MAX_CONNECTIONS_PER_ADDRESS: '1000',
      SVC_SLOW_REQUEST_BYTES_PER_SECOND: '0',
      SVC_SLOW_REQUEST_WINDOW_SECONDS: '30',
      SVC_KEEP_ALIVE_TIMEOUT_SECONDS: '30',
      SVC_UPLOAD_TIMEOUT_SECONDS: '600',
      SVC_UPLOAD_MIN_BYTES_PER_SECOND: '0',
      SVC_UPLOAD_RATE_WINDOW_SECONDS: '10',
      SVC_UPLOADS_PER_KEY: '2',
    };
    expect(loadConfig(env, CWD).http).toMatchObject({
      maxConnectionsPerAddress: 1000,
      slowRequestBytesPerSecond: 0,
      slowRequestWindowSeconds: 30,
      keepAliveTimeoutSeconds: 30,
      uploadTimeoutSeconds: 600,
      uploadMinBytesPerSecond: 0,
      uploadRateWindowSeconds: 10,
      uploadsPerKey: 2,
    });
  });

  it.each([
    [
      { SVC_MAX_CONNECTIONS_PER_ADDRESS: '0' },
      'SVC_MAX_CONNECTIONS_PER_ADDRESS',
      /must be between 1 and 1000000 \(got 0\)/,
    ],
    [
      { SVC_MAX_CONNECTIONS_PER_ADDRESS: '1001' },
      'SVC_MAX_CONNECTIONS_PER_ADDRESS',
      /must not exceed SVC_MAX_CONNECTIONS \(1000; got 1001\)/,
    ],
    [
      { SVC_MAX_CONNECTIONS: '10', SVC_MAX_CONNECTIONS_PER_ADDRESS: '11' },
      'SVC_MAX_CONNECTIONS_PER_ADDRESS',
      /must not exceed SVC_MAX_CONNECTIONS \(10; got 11\)/,
    ],
    [{ SVC_SLOW_REQUEST_BYTES_PER_SECOND: '1k' }, 'SVC_SLOW_REQUEST_BYTES_PER_SECOND', /whole number/],
    [
      { SVC_SLOW_REQUEST_WINDOW_SECONDS: '0' },
      'SVC_SLOW_REQUEST_WINDOW_SECONDS',
      /must be between 1 and 3600 \(got 0\)/,
    ],
    [{ SVC_KEEP_ALIVE_TIMEOUT_SECONDS: '0' }, 'SVC_KEEP_ALIVE_TIMEOUT_SECONDS', /must be between 1 and 3600 \(got 0\)/],
    [
      { SVC_KEEP_ALIVE_TIMEOUT_SECONDS: '31' },
      'SVC_KEEP_ALIVE_TIMEOUT_SECONDS',
      /must not exceed SVC_BODY_IDLE_TIMEOUT_SECONDS \(30; got 31\)/,
    ],
    [{ SVC_UPLOAD_TIMEOUT_SECONDS: '0' }, 'SVC_UPLOAD_TIMEOUT_SECONDS', /must be between 1 and 86400 \(got 0\)/],
    [{ SVC_UPLOAD_MIN_BYTES_PER_SECOND: '1k' }, 'SVC_UPLOAD_MIN_BYTES_PER_SECOND', /whole number/],
    [{ SVC_UPLOAD_RATE_WINDOW_SECONDS: '0' }, 'SVC_UPLOAD_RATE_WINDOW_SECONDS', /must be between 1 and 3600 \(got 0\)/],
    [{ SVC_UPLOADS_PER_KEY: '0' }, 'SVC_UPLOADS_PER_KEY', /must be between 1 and 10000 \(got 0\)/],
  ])('%j is refused', (env, variable, problem) => {
    const err = configError(env);
    expect(err.variable).toBe(variable);
    expect(err.message).toMatch(problem);
  });
});

describe('database connection bounds', () => {
  it('defaults: 5 s to open a connection, 10 s to wait for a free one', () => {
    expect(loadConfig({}, CWD).dbBounds).toEqual({ connectTimeoutMs: 5000, poolWaitMs: 10_000 });
  });

  it('reads both, and the wait default follows a shorter request timeout', () => {
    expect(loadConfig({ SVC_DB_CONNECT_TIMEOUT_MS: '750', SVC_DB_POOL_WAIT_MS: '2500' }, CWD).dbBounds).toEqual({
      connectTimeoutMs: 750,
      poolWaitMs: 2500,
    });
    expect(loadConfig({ SVC_REQUEST_TIMEOUT_SECONDS: '4' }, CWD).dbBounds.poolWaitMs).toBe(4000);
  });

  it.each([
    [{ SVC_DB_CONNECT_TIMEOUT_MS: '99' }, 'SVC_DB_CONNECT_TIMEOUT_MS', /must be between 100 and 600000 \(got 99\)/],
    [{ SVC_DB_CONNECT_TIMEOUT_MS: '2s' }, 'SVC_DB_CONNECT_TIMEOUT_MS', /whole number/],
    [{ SVC_DB_POOL_WAIT_MS: '0' }, 'SVC_DB_POOL_WAIT_MS', /must be between 1 and 86400000 \(got 0\)/],
    [
      { SVC_DB_POOL_WAIT_MS: '60001' },
      'SVC_DB_POOL_WAIT_MS',
      /must not exceed SVC_REQUEST_TIMEOUT_SECONDS \(60000 ms; got 60001\)/,
    ],
    [
      { SVC_REQUEST_TIMEOUT_SECONDS: '5', SVC_DB_POOL_WAIT_MS: '5001' },
      'SVC_DB_POOL_WAIT_MS',
      /must not exceed SVC_REQUEST_TIMEOUT_SECONDS \(5000 ms; got 5001\)/,
    ],
  ])('%j is refused', (env, variable, problem) => {
    const err = configError(env);
    expect(err.variable).toBe(variable);
    expect(err.message).toMatch(problem);
  });
});
