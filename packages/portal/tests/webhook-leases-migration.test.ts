import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate.ts';
import { openDatabase, type DatabaseHandle } from '../src/db/pool.ts';
import { createTestDatabase } from '@svc/test-support/portal';
import { migrateBefore } from './helpers/migrate-before.ts';

/**
 * Migration 0019 on a database an earlier version left: deliveries it left `pending` (a crash,
 * or a replica of that version still sending them) get a lease ending ten minutes later, after
 * which any replica takes them over; finished ones get none.
 */

let handle: DatabaseHandle;
afterAll(() => handle?.close());

describe('migration 0019_delivery_leases', () => {
  it('leases the deliveries left pending, ten minutes ahead; adds runs = 1 and the abandoned state', async () => {
    handle = openDatabase(await createTestDatabase(), { max: 2, logger: pino({ level: 'silent' }) });
    await migrateBefore(handle.db, '0019_delivery_leases');
    const q = (text: string, values: unknown[] = []) => handle.pool.query(text, values).then((r) => r.rows);
    await q(`INSERT INTO webhook_subscriptions (id, url, event_types, signing_secret, created_by)
             VALUES ('whsub_000000000001', 'https://receiver.test/', '{status_changed}', 'secret', 'admin')`);
    const [pending, done] = await q(
      `INSERT INTO webhook_deliveries (subscription_id, event_id, event_type, body, status)
       VALUES ('whsub_000000000001', 'evt_0000000000000001', 'status_changed', '{}', 'pending'),
              ('whsub_000000000001', 'evt_0000000000000002', 'status_changed', '{}', 'succeeded')
       RETURNING id`,
    );
    await expect(q(`UPDATE webhook_deliveries SET status = 'abandoned' WHERE id = $1`, [done.id])).rejects.toThrow(
      /webhook_deliveries_status_check/,
    );

    await migrateToLatest(handle.db);
    expect(
      await q(
        `SELECT delivery_id, claimed_by,
                claimed_until - now() BETWEEN interval '9 minutes' AND interval '10 minutes' AS ten_minutes
         FROM webhook_delivery_leases`,
      ),
    ).toEqual([{ delivery_id: pending.id, claimed_by: 'before-0019', ten_minutes: true }]);
    expect(await q('SELECT id, status, runs FROM webhook_deliveries ORDER BY id')).toEqual([
      { id: pending.id, status: 'pending', runs: 1 },
      { id: done.id, status: 'succeeded', runs: 1 },
    ]);
    await q(`UPDATE webhook_deliveries SET status = 'abandoned' WHERE id = $1`, [done.id]);
    // A subscription's deletion takes its deliveries' leases with them.
    await q(`DELETE FROM webhook_subscriptions`);
    expect(await q('SELECT * FROM webhook_delivery_leases')).toEqual([]);
  });
});
