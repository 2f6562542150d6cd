import type { AppContext } from '../context.ts';
import { ensureIndexed } from './findings.ts';
import { unindexedSessions } from './record-target-queries.ts';

const BATCH = 50;

/**
 * After the upgrade to findings of record (docs/findings-of-record.md#migration): every stored
 * session is indexed again with its record keys, its target's triage read into records first
 * (records-seed.ts, the newest session of each target wins). Runs in the background at start,
 * one session at a time, newest first, until none is left; a session read meanwhile (a
 * findings page, a download) is indexed by that request instead. A session whose file cannot be
 * read is skipped for this run and logged. Returns how many it indexed.
 */
export async function backfillRecords(ctx: AppContext, stop: () => boolean): Promise<number> {
  let indexed = 0;
  const failed = new Set<string>();
  for (;;) {
    const batch = (await unindexedSessions(ctx.db, BATCH + failed.size)).filter(
      (s) => !failed.has(JSON.stringify([s.client_id, s.session_id])),
    );
    if (batch.length === 0 || stop()) break;
    for (const session of batch) {
      if (stop()) break;
      if (session.files['session_results.json'] === undefined) {
        failed.add(JSON.stringify([session.client_id, session.session_id]));
        continue;
      }
      try {
        await ensureIndexed(ctx, session);
        indexed++;
      } catch (err) {
        failed.add(JSON.stringify([session.client_id, session.session_id]));
        ctx.logger.warn(
          { err, session_id: session.session_id },
          'could not index a stored session for its findings of record',
        );
      }
    }
  }
  if (indexed > 0)
    ctx.logger.info({ indexed, skipped: failed.size }, 'stored sessions indexed for their findings of record');
  return indexed;
}
