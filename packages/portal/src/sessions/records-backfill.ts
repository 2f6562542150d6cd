import type { AppContext } from '../context.ts';
import { ensureIndexed } from './findings.ts';
import { eachStoredSession } from './each-stored-session.ts';
import { unindexedSessions } from './record-target-queries.ts';

/**
 * After the upgrade to findings of record (docs/findings-of-record.md#migration): every stored
 * session is indexed again with its record keys, its target's triage read into records first
 * (records-seed.ts, the newest session of each target wins). Runs in the background at start,
 * one session at a time, newest first, until none is left; a session read meanwhile (a
 * findings page, a download) is indexed by that request instead. A session whose file cannot be
 * read is skipped for this run and logged. Returns how many it indexed.
 */
export async function backfillRecords(ctx: AppContext, stop: () => boolean): Promise<number> {
  let skipped = 0;
  const indexed = await eachStoredSession(
    (limit) => unindexedSessions(ctx.db, limit),
    async (session) => {
      if (session.files['session_results.json'] === undefined) {
        skipped++;
        return false;
      }
      try {
        await ensureIndexed(ctx, session);
        return true;
      } catch (err) {
        skipped++;
        ctx.logger.warn(
          { err, session_id: session.session_id },
          'could not index a stored session for its findings of record',
        );
        return false;
      }
    },
    stop,
  );
  if (indexed > 0) ctx.logger.info({ indexed, skipped }, 'stored sessions indexed for their findings of record');
  return indexed;
}
