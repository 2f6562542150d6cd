/// <reference path="./provided-context.d.ts" />
import fs from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { isRunning, readPostmasterPid, startEmbeddedPostgres } from '@svc/portal/db/embedded';
import { layout } from '@svc/portal/db/embedded-location';
import { migrateToLatest } from '@svc/portal/db/migrate';
import { openDatabase } from '@svc/portal/db/pool';
import { createLogger } from '@svc/portal/logging';
import { freePort } from './ports.ts';
import { scratchParent } from './scratch-dir.ts';

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

const PREFIX = 'svc-test-pg-';
/** Older than any run: a cluster dir this old with no live postmaster belongs to a run that was killed. */
const ABANDONED_AFTER_MS = 6 * 3600_000;

/**
 * A run killed before its teardown leaves its cluster behind, in memory when the scratch parent
 * is /dev/shm: the next run removes those whose postmaster is gone. Another run's live cluster,
 * or one still being created (no postmaster yet, but new), is left alone.
 */
async function removeAbandonedClusters(parent: string): Promise<void> {
  for (const name of await fs.readdir(parent).catch(() => [] as string[])) {
    if (!name.startsWith(PREFIX)) continue;
    const dir = path.join(parent, name);
    const stat = await fs.stat(dir).catch(() => null);
    if (stat === null || Date.now() - stat.mtimeMs < ABANDONED_AFTER_MS) continue;
    const pid = await readPostmasterPid(layout(dir, dir).cluster);
    if (pid !== null && (await isRunning(pid))) continue;
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/**
 * One real PostgreSQL server for the whole run, started with the same embedded-server
 * code the portal uses. Durability is traded for speed here only (fsync off): a test
 * cluster is thrown away at the end. Vitest's globalSetup (vitest.config.ts).
 * @public
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const parent = scratchParent();
  await removeAbandonedClusters(parent);
  const dir = await fs.mkdtemp(path.join(parent, PREFIX));
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
