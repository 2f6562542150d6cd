/// <reference path="./provided-context.d.ts" />
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { loadConfig } from '@svc/portal/config';
import { startPortal, type Portal, type StartOptions } from '@svc/portal/server';
import type { Resolver } from '@svc/portal/webhooks/url-safety';
import { holdPort } from './ports.ts';
import { testTempDir } from './temp-dirs.ts';

export const ADMIN_EMAIL = 'admin@test.local';
export const ADMIN_PASSWORD = 'admin-password-0123';
export const LEGACY_KEY = 'legacy-shared-key-for-tests-0123456789';
/**
 * SVC_IDENTITY_KEY_ENCRYPTION_KEY of every test portal, as replicas sharing a database must
 * share it: tests start second portals on one database with their own data directories.
 * Pass `SVC_IDENTITY_KEY_ENCRYPTION_KEY: undefined` in env for the generated key file.
 */
export const KEY_ENCRYPTION_KEY = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';

/**
 * A fresh database on the shared test cluster; returns its URL. Empty by default; `migrated`
 * copies the schema at its latest migration (what a portal's first start would create).
 */
export async function createTestDatabase(opts: { migrated?: boolean } = {}): Promise<string> {
  const adminUrl = inject('pgAdminUrl');
  const name = `t_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    // FILE_COPY copies the template's files instead of logging every page: 31 against 116 ms a
    // copy on tmpfs; its two checkpoints cost little with fsync off (test-support/postgres.ts).
    const template = opts.migrated ? ` TEMPLATE ${inject('pgMigratedTemplate')} STRATEGY FILE_COPY` : '';
    await client.query(`CREATE DATABASE ${name}${template}`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export interface TestPortal extends Portal {
  databaseUrl: string;
  /** SVC_DATA_DIR of this portal (blob store under blobs/). */
  dataDir: string;
  /** Log in as the bootstrap admin and return its access token. */
  adminToken(): Promise<string>;
}

export interface TestPortalOptions {
  env?: Record<string, string | undefined>;
  now?: () => Date;
  logDestination?: StartOptions['logDestination'];
  databaseUrl?: string;
  /** DNS for webhook URLs (StartOptions.resolver), e.g. to simulate rebinding. */
  resolver?: Resolver;
  /**
   * Listen on a port held for it and make that the base URL (SVC_BASE_URL), for what checks the
   * base URL against where the portal really is: sign-in's Origin, the share page's links.
   */
  ownBaseUrl?: boolean;
  /** When the orphan sweep retries (StartOptions.orphanSweep). */
  orphanSweep?: StartOptions['orphanSweep'];
}

/** The real portal, in process, on a real database, listening on 127.0.0.1 on a free port. */
export async function startTestPortal(opts: TestPortalOptions = {}): Promise<TestPortal> {
  const databaseUrl = opts.databaseUrl ?? (await createTestDatabase({ migrated: true }));
  const dataDir = opts.env?.['SVC_DATA_DIR'] ?? (await testTempDir('svc-test-data-'));
  const held = opts.ownBaseUrl ? await holdPort() : null;
  const own = held ? { PORT: String(held.port), SVC_BASE_URL: `http://127.0.0.1:${held.port}` } : {};
  const config = loadConfig({
    SVC_DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    SVC_ADMIN_EMAIL: ADMIN_EMAIL,
    SVC_ADMIN_PASSWORD: ADMIN_PASSWORD,
    SVC_UPLOAD_API_KEY: LEGACY_KEY,
    SVC_LOG_LEVEL: 'silent',
    SVC_BASE_URL: 'http://portal.test',
    SVC_IDENTITY_KEY_ENCRYPTION_KEY: KEY_ENCRYPTION_KEY,
    // Suites try many wrong keys from 127.0.0.1 on purpose; tests/key-throttle.test.ts turns it on.
    SVC_API_KEY_FAILURES_PER_MINUTE: '0',
    // Every test client is one address (loopback), as in the benchmarks: many at once must fit.
    // tests/connection-limits and connection-slow set their own caps.
    SVC_MAX_CONNECTIONS_PER_ADDRESS: '1000',
    // A loaded test machine holds connections long: a "503 Database busy" would be load, not the
    // behaviour under test (tests/database-pool-bounds sets its own small wait). The wait may not
    // pass the request timeout, which some tests shorten.
    SVC_DB_POOL_WAIT_MS: String(Math.min(60_000, Number(opts.env?.['SVC_REQUEST_TIMEOUT_SECONDS'] ?? 60) * 1000)),
    ...own,
    ...opts.env,
  });
  const portal = await startPortal(config, {
    now: opts.now,
    logDestination: opts.logDestination,
    resolver: opts.resolver,
    reusePort: held !== null,
    orphanSweep: opts.orphanSweep,
  }).finally(() => held?.close());
  let token: string | null = null;
  return {
    ...portal,
    databaseUrl,
    dataDir,
    async adminToken() {
      token ??= await login(portal.url, ADMIN_EMAIL, ADMIN_PASSWORD);
      return token;
    },
  };
}

export async function login(baseUrl: string, email: string, password: string): Promise<string> {
  const res = await fetch(`${baseUrl}/identity/token`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'password', username: email, password }),
  });
  const body = (await res.json()) as { access_token?: string; error?: string };
  if (res.status !== 200 || !body.access_token) throw new Error(`login failed: ${res.status} ${JSON.stringify(body)}`);
  return body.access_token;
}
