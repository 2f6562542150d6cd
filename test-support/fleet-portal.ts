import type pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { type FakeClock, openDb } from './factories.ts';
import { startTestPortal, type TestPortal } from './portal.ts';

type DomainEvent = Parameters<Parameters<TestPortal['ctx']['events']['subscribe']>[0]>[0];

export interface FleetPortal {
  portal: TestPortal;
  db: pg.Client;
  /** The administrator's access token. */
  admin: string;
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
  let fleet: FleetPortal | undefined;
  beforeAll(async () => {
    const portal = await startTestPortal(opts.clock === undefined ? {} : { now: opts.clock.now });
    try {
      fleet = { portal, db: await openDb(portal), admin: await portal.adminToken() };
    } catch (err) {
      await portal.close();
      throw err;
    }
    const events = opts.events;
    if (events !== undefined) portal.ctx.events.subscribe((e) => void events.push(e));
    onReady(fleet);
  });
  afterAll(async () => {
    await fleet?.db.end();
    await fleet?.portal.close();
  });
}
