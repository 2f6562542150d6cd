import type { Kysely } from 'kysely';
import { recordAuditEvent } from '../audit/record.ts';
import { actorOf, type Principal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import type { Database } from '../db/schema.ts';
import { sessionNotFound } from './access.ts';
import { keyDeleteGuard } from './key-limits.ts';
import { clientIdOut } from './present.ts';
import { deleteSessionRow, type SessionRef, type SessionRow } from './queries.ts';

export interface DeleteOptions {
  /**
   * Delete only while the session is still expired at this instant (the retention sweep).
   * Checked by the DELETE itself, so a re-upload that renewed the session after the sweep
   * picked it is never deleted.
   */
  expiredAt?: Date;
  /** Run in the delete's transaction before the row goes; throws to refuse (a key's limits, key-limits.ts). */
  guard?: ((trx: Kysely<Database>) => Promise<void>) | null;
}

/**
 * Delete a session completely. The rows go first, in one transaction with the audit
 * event, so the session disappears at once; then its files; then the `session_deleted`
 * event is published, after the files are gone. A crash between the two steps
 * leaves only unreferenced files, which the start-up sweep removes.
 */
export async function deleteSession(
  ctx: AppContext,
  ref: SessionRef,
  actor: string,
  opts: DeleteOptions = {},
): Promise<boolean> {
  const now = ctx.now();
  const { sessionId } = ref;
  const outcome = await ctx.db.transaction().execute(async (trx) => {
    await opts.guard?.(trx);
    const row = await deleteSessionRow(trx, ref, opts.expiredAt);
    if (!row) return null;
    const event = await recordAuditEvent(trx, {
      event_type: 'session_deleted',
      actor,
      session_id: sessionId,
      client_id: clientIdOut(row.client_id),
      data: {
        session_id: sessionId,
        client: row.client,
        client_id: clientIdOut(row.client_id),
        deleted_by: actor,
        deleted_at: now.toISOString(),
      },
    });
    return { row, event };
  });
  if (outcome === null) return false;
  // The rows are gone for good: a file that cannot be removed now is an orphan for the
  // start-up sweep, not a reason to report the (committed) delete as failed.
  await ctx.blobs
    .delete(Object.values(outcome.row.files).map((f) => f.key))
    .catch((err: unknown) =>
      ctx.logger.warn({ err, session_id: sessionId }, 'could not delete the files of a deleted session'),
    );
  ctx.events.publish(outcome.event);
  return true;
}

/**
 * A caller's delete (docs/api.md#sessions): an identity's, or a key's within the key's limits
 * (key-limits.ts). A session deleted meanwhile, by another request or the sweep, is a 404.
 */
export async function removeSession(ctx: AppContext, session: SessionRow, principal: Principal): Promise<void> {
  const ref = { clientId: session.client_id, sessionId: session.session_id };
  const guard = keyDeleteGuard(principal, session, () => ctx.now());
  if (!(await deleteSession(ctx, ref, actorOf(principal), { guard }))) throw sessionNotFound();
}
