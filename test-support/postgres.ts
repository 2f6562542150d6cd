/// <reference path="./provided-context.d.ts" />
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '@svc/portal/db/embedded';
import { migrateToLatest } from '@svc/portal/db/migrate';
import { openDatabase } from '@svc/portal/db/pool';
import { createLogger } from '@svc/portal/logging';
import { freePort } from './ports.ts';

const MIGRATED_TEMPLATE = 'svc_migrated_template';

/**
 * The schema at its latest migration, built once by the portal's own migrator. A test portal's
 * database is a copy of it, so each start skips the migrations; no connection is allowed to it
 * afterwards, as PostgreSQL copies a template only while nobody is connected.
 */
async function createMigratedTemplate(adminUrl: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${MIGRATED_TEMPLATE}`);
    const url = new URL(adminUrl);
    url.pathname = `/${MIGRATED_TEMPLATE}`;
    const handle = openDatabase(url.toString(), { max: 1, logger: createLogger('warn') });
    try {
      await migrateToLatest(handle.db);
    } finally {
      await handle.close();
    }
    await admin.query(`ALTER DATABASE ${MIGRATED_TEMPLATE} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
  } finally {
    await admin.end();
  }
}

/**
 * One real PostgreSQL server for the whole run, started with the same embedded-server
 * code the portal uses. Durability is traded for speed here only (fsync off): a test
 * cluster is thrown away at the end. Vitest's globalSetup (vitest.config.ts).
 * @public
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-test-pg-'));
  await fs.chmod(dir, 0o755);
  const server = await startEmbeddedPostgres({
    dataDir: dir,
    port: await freePort(),
    logger: createLogger('warn'),
    database: 'postgres',
    settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '400' },
  });
  await createMigratedTemplate(server.url);
  project.provide('pgAdminUrl', server.url);
  project.provide('pgMigratedTemplate', MIGRATED_TEMPLATE);
  return async () => {
    await server.stop();
    await fs.rm(dir, { recursive: true, force: true });
  };
}
