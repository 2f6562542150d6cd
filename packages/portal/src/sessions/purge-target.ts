import { recordAuditEvent } from '../audit/record.ts';
import type { AppContext } from '../context.ts';
import { deleteTargets } from '../records/queries.ts';
import { deleteSession } from './delete.ts';
import { clientIdOut } from './present.ts';
import { sessionsOfRecordTarget } from './record-target-queries.ts';

/**
 * Purging a target, or a whole client (docs/findings-of-record.md#retention): its sessions are
 * deleted one by one (each audited and announced as any deletion), then its findings of record
 * with their history, audited as `target_purged`. The only way records go besides
 * SVC_RECORD_RETENTION_DAYS: deleting or expiring sessions never removes a decision.
 */
export async function purgeTarget(
  ctx: AppContext,
  c: { clientId: string; target: string | undefined; actor: string },
): Promise<{ sessions: number; records: number }> {
  let sessions = 0;
  for (const ref of await sessionsOfRecordTarget(ctx.db, c.clientId, c.target))
    if (await deleteSession(ctx, ref, c.actor)) sessions++;
  const { records, event } = await ctx.db.transaction().execute(async (trx) => {
    const n = await deleteTargets(trx, c.clientId, c.target);
    const e = await recordAuditEvent(trx, {
      event_type: 'target_purged',
      actor: c.actor,
      client_id: clientIdOut(c.clientId),
      data: {
        client_id: clientIdOut(c.clientId),
        target: c.target ?? null,
        sessions_deleted: sessions,
        records_deleted: n,
        purged_by: c.actor,
        purged_at: ctx.now().toISOString(),
      },
    });
    return { records: n, event: e };
  });
  ctx.events.publish(event);
  return { sessions, records };
}
