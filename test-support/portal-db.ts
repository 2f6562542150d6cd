import type pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
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
