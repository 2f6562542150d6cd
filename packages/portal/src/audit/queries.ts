import { sql, type Kysely } from 'kysely';
import { AUDIT_MAX_DAYS, type AuditEvent, type AuditEventType } from '@svc/protocol';
import type { Database } from '../db/schema.ts';
import { presentAuditEvent } from './record.ts';

/** Events older than the 90-day window are pruned on every audit read (SPEC). */
export async function pruneAuditEvents(db: Kysely<Database>): Promise<number> {
  const res = await db
    .deleteFrom('audit_events')
    .where('created_at', '<', sql<Date>`now() - make_interval(days => ${AUDIT_MAX_DAYS})`)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

export interface AuditFilter {
  days: number;
  type?: AuditEventType;
  session?: string;
  /** null: every client (admins); otherwise only these client ids. */
  clientIds: string[] | null;
  limit: number;
}

export async function listAuditEvents(
  db: Kysely<Database>,
  f: AuditFilter,
): Promise<{ events: AuditEvent[]; total: number }> {
  let q = db.selectFrom('audit_events').where('created_at', '>=', sql<Date>`now() - make_interval(days => ${f.days})`);
  if (f.type) q = q.where('event_type', '=', f.type);
  if (f.session) q = q.where('session_id', '=', f.session);
  if (f.clientIds !== null) {
    if (f.clientIds.length === 0) return { events: [], total: 0 };
    q = q.where('client_id', 'in', f.clientIds);
  }
  const [rows, count] = await Promise.all([
    q.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(f.limit).execute(),
    q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { events: rows.map(presentAuditEvent), total: Number(count.n) };
}
