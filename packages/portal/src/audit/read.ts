import type { Kysely } from 'kysely';
import type { AuditEvent } from '@svc/protocol';
import type { Database } from '../db/schema.ts';
import { presentAuditEvent } from './present.ts';
import { type AuditFilter, closeAuditHours, pruneAuditEvents, selectAuditEvents } from './queries.ts';

/**
 * Every read of the log first prunes the events older than 90 days, and closes the hours since
 * the last close (a day of them at most; the hourly housekeeping closes the rest).
 */
export async function readAuditLog(
  db: Kysely<Database>,
  filter: AuditFilter,
): Promise<{ events: AuditEvent[]; total: number }> {
  await pruneAuditEvents(db);
  await closeAuditHours(db, 1);
  const { rows, total } = await selectAuditEvents(db, filter);
  return { events: rows.map(presentAuditEvent), total };
}
