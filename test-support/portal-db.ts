import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { type DatabaseHandle, openDatabase } from '@svc/portal/db/pool';
import { createLogger } from '@svc/portal/logging';
import { openDb } from './factories.ts';
import { startTestPortal, type TestPortal, type TestPortalOptions } from './portal.ts';

/**
 * One in-process portal for the file (or describe block) and a database connection to it,
 * handed to the file's own variables by `onReady`: `usePortalWithDb((p) => ({ portal, db } = p))`.
 */
export function usePortalWithDb(
  onReady: (p: { portal: TestPortal; db: pg.Client }) => void | Promise<void>,
  opts: TestPortalOptions = {},
): void {
  let portal: TestPortal | undefined;
  let db: pg.Client | undefined;
  beforeAll(async () => {
    portal = await startTestPortal(opts);
    db = await openDb(portal);
    await onReady({ portal, db });
  });
  afterAll(async () => {
    await db?.end();
    await portal?.close();
  });
}

/**
 * Connections to test databases that the file closes after its tests: `open` is the portal's
 * own pool (Kysely and pg), `connect` one plain client, as migration and trigger tests use both.
 */
export function useDatabaseConnections(): {
  open(url: string): DatabaseHandle;
  connect(url: string): Promise<pg.Client>;
} {
  const handles: DatabaseHandle[] = [];
  const clients: pg.Client[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.end()));
    await Promise.all(handles.map((h) => h.close()));
  });
  return {
    open(url) {
      const handle = openDatabase(url, { max: 4, logger: createLogger('silent') });
      handles.push(handle);
      return handle;
    },
    async connect(url) {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      clients.push(c);
      return c;
    },
  };
}
