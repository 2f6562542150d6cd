import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../../src/db/embedded.ts';
import { freePort } from './free-port.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Superuser URL of the shared test cluster (database `postgres`); each test file makes its own database. */
    pgAdminUrl: string;
  }
}

/**
 * One real PostgreSQL server for the whole run, started with the same embedded-server
 * code the portal uses. Durability is traded for speed here only (fsync off): a test
 * cluster is thrown away at the end.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-test-pg-'));
  await fs.chmod(dir, 0o755);
  const server = await startEmbeddedPostgres({
    dataDir: dir,
    port: await freePort(),
    logger: pino({ level: 'warn' }),
    database: 'postgres',
    settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '400' },
  });
  project.provide('pgAdminUrl', server.url);
  return async () => {
    await server.stop();
    await fs.rm(dir, { recursive: true, force: true });
  };
}
