import type pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { type FakeClock, openDb } from './factories.ts';
import { startTestPortal, type TestPortal, type TestPortalOptions } from './portal.ts';

type DomainEvent = Parameters<Parameters<TestPortal['ctx']['events']['subscribe']>[0]>[0];

export interface FleetPortal {
  portal: TestPortal;
  db: pg.Client;
  /** The administrator's access token. */
  admin: string;
}

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
 * The set-up the portal's fleet tests share (heartbeats, commands, groups, the admin side): one
 * portal for the file, on `clock` when given, a database connection and the admin's token, handed
 * to the file's own variables by `onReady`; every domain event is pushed into `events` when given.
 */
export function useFleetPortal(
  onReady: (fleet: FleetPortal) => void,
  opts: { clock?: FakeClock; events?: DomainEvent[] } = {},
): void {
  usePortalWithDb(
    async ({ portal, db }) => {
      const fleet = { portal, db, admin: await portal.adminToken() };
      const events = opts.events;
      if (events !== undefined) portal.ctx.events.subscribe((e) => void events.push(e));
      onReady(fleet);
    },
    opts.clock === undefined ? {} : { now: opts.clock.now },
  );
}
