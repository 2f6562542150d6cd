import type pg from 'pg';
import type { FakeClock } from './factories.ts';
import type { TestPortal } from './portal.ts';
import { usePortalWithDb } from './portal-db.ts';

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
