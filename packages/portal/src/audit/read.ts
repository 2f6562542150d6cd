import type { Kysely } from 'kysely';
import type { AuditEvent } from '@svc/protocol';
import type { Database } from '../db/schema.ts';
import { presentAuditEvent } from './present.ts';
import { type AuditFilter, pruneAuditEvents, selectAuditEvents } from './queries.ts';

/** Every read of the log first prunes the events older than 90 days. */
export async function readAuditLog(
  db: Kysely<Database>,
  filter: AuditFilter,
): Promise<{ events: AuditEvent[]; total: number }> {
  await pruneAuditEvents(db);
  const { rows, total } = await selectAuditEvents(db, filter);
  return { events: rows.map(presentAuditEvent), total };
}
