import type { AppContext } from '../context.ts';
import type { DomainEvent } from '../events/bus.ts';
import { stageEvents } from '../webhooks/outbox-queries.ts';
import { clientIdOut } from './present.ts';
import { deleteSession } from './delete.ts';
import { expiredSessions, markExpiringSessions } from './queries.ts';

export const EXPIRY_NOTICE_DAYS = 7;
const BATCH = 500;

/**
 * docs/api.md#sessions: sessions past `expires_at` are removed completely (files and rows) and audited as
 * deleted by `retention`. Runs at start and then hourly; batches keep each pass bounded.
 */
export async function sweepExpiredSessions(ctx: AppContext): Promise<number> {
  let removed = 0;
  for (;;) {
    const now = ctx.now();
    const due = await expiredSessions(ctx.db, now, BATCH);
    // expiredAt: a session renewed by a re-upload since it was selected is kept.
    for (const ref of due) if (await deleteSession(ctx, ref, 'retention', { expiredAt: now })) removed++;
    if (due.length < BATCH) return removed;
  }
}

/**
 * `report_expiring` fires once per session, lazily from listing, when the session is
 * inside the last 7 days before expiry. Marking and selecting is one UPDATE, so two
 * replicas listing at once cannot both notify; the events are staged for webhooks in the same
 * transaction (migration 0036), so a process that stops before sending them leaves them to a
 * replica's sweep instead of losing them.
 */
export async function notifyExpiringSessions(ctx: AppContext): Promise<number> {
  const now = ctx.now();
  const events = await ctx.db.transaction().execute(async (trx) => {
    const rows = await markExpiringSessions(trx, now, EXPIRY_NOTICE_DAYS, BATCH);
    const all: DomainEvent[] = rows.map((r) => ({
      event_type: 'report_expiring',
      actor: 'system',
      session_id: r.session_id,
      client_id: clientIdOut(r.client_id),
      created_at: now.toISOString(),
      data: {
        session_id: r.session_id,
        client: r.client,
        client_id: clientIdOut(r.client_id),
        target: r.target,
        uploaded_at: r.uploaded_at.toISOString(),
        expires_at: r.expires_at.toISOString(),
        days_remaining: Math.max(0, Math.ceil((r.expires_at.getTime() - now.getTime()) / 86_400_000)),
      },
    }));
    return stageEvents(trx, all);
  });
  for (const e of events) ctx.events.publish(e);
  return events.length;
}
