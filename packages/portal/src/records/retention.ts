import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { deleteStaleResolved } from './queries.ts';

const BATCH = 1000;

/**
 * SVC_RECORD_RETENTION_DAYS (docs/findings-of-record.md#retention): resolved records not seen for
 * that many days and with no decision in effect (an exception, a false positive) are removed; 0
 * keeps them. Session retention never touches records: a target's decisions outlive its sessions.
 */
export async function sweepStaleRecords(db: Kysely<Database>, days: number, now: Date): Promise<number> {
  if (days <= 0) return 0;
  const before = new Date(now.getTime() - days * 86_400_000);
  let removed = 0;
  for (;;) {
    const n = await deleteStaleResolved(db, before, BATCH);
    removed += n;
    if (n < BATCH) return removed;
  }
}
