import type { AppContext } from '../context.ts';
import { lockTarget } from '../records/queries.ts';
import { eachStoredSession } from './each-stored-session.ts';
import { recordTarget } from './records-merge.ts';
import { lockUncounted, recountSession, uncountedSessions } from './triage-counts-queries.ts';

/**
 * After the upgrade to migration 0043: every indexed session whose due counts do not count its
 * stored file (indexed before, or by a replica of an earlier version) is counted from scratch,
 * so its first page sums its counts instead of reading each row's record. Runs in the background
 * at start, one session at a time, newest first; one that fails is logged and keeps the slow
 * count. Returns how many it counted.
 */
export async function countUncountedSessions(
  ctx: Pick<AppContext, 'db' | 'logger'>,
  stop: () => boolean,
): Promise<number> {
  const counted = await eachStoredSession(
    (limit) => uncountedSessions(ctx.db, limit),
    async (s) => {
      const ref = { clientId: s.client_id, sessionId: s.session_id };
      const target = recordTarget(s.target);
      try {
        // The target first, then the index's state row, in the order an upload takes them; the
        // session's own row is not needed: recounting changes none of its numbers.
        return await ctx.db.transaction().execute(async (trx) => {
          await lockTarget(trx, { clientId: ref.clientId, target });
          if (!(await lockUncounted(trx, ref))) return false;
          await recountSession(trx, ref, target);
          return true;
        });
      } catch (err) {
        ctx.logger.warn({ err, session_id: s.session_id }, 'could not count the due findings of a stored session');
        return false;
      }
    },
    stop,
  );
  if (counted > 0) ctx.logger.info({ counted }, 'stored sessions counted for their overdue findings');
  return counted;
}
