import { sql } from 'kysely';
import type { AppContext } from '../context.ts';
import { clientIdOut } from './present.ts';
import { deleteSession } from './delete.ts';

export const EXPIRY_NOTICE_DAYS = 7;
const BATCH = 500;

/**
 * D6: sessions past `expires_at` are removed completely (files and rows) and audited as
 * deleted by `retention`. Runs at start and then hourly; batches keep each pass bounded.
 */
export async function sweepExpiredSessions(ctx: AppContext): Promise<number> {
  let removed = 0;
  for (;;) {
    const now = ctx.now();
    const due = await ctx.db
      .selectFrom('sessions')
      .select(['client_id', 'session_id'])
      .where('expires_at', '<=', now)
      .orderBy('expires_at')
      .limit(BATCH)
      .execute();
    // expiredAt: a session renewed by a re-upload since it was selected is kept.
    for (const r of due)
      if (await deleteSession(ctx, { clientId: r.client_id, sessionId: r.session_id }, 'retention', { expiredAt: now }))
        removed++;
    if (due.length < BATCH) return removed;
  }
}

/**
 * `report_expiring` fires once per session, lazily from listing, when the session is
 * inside the last 7 days before expiry. Marking and selecting is one UPDATE, so two
 * replicas listing at once cannot both notify.
 */
export async function notifyExpiringSessions(ctx: AppContext): Promise<number> {
  const now = ctx.now();
  const rows = await ctx.db
    .updateTable('sessions')
    .set({ expiry_notified_at: now })
    .where(
      sql<boolean>`(client_id, session_id) IN (
        SELECT client_id, session_id FROM sessions
        WHERE expiry_notified_at IS NULL AND expires_at > ${now}
          AND expires_at <= ${now}::timestamptz + make_interval(days => ${EXPIRY_NOTICE_DAYS})
        LIMIT ${BATCH})`,
    )
    .where('expiry_notified_at', 'is', null)
    .returning(['session_id', 'client', 'client_id', 'target', 'uploaded_at', 'expires_at'])
    .execute();
  for (const r of rows) {
    ctx.events.publish({
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
    });
  }
  return rows.length;
}
