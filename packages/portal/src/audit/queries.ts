import { type Insertable, type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import { AUDIT_MAX_DAYS, type AuditEventType } from '@svc/protocol';
import type { AuditEventsTable, Database } from '../db/schema.ts';

type AuditRow = Selectable<AuditEventsTable>;

export function insertAuditEvent(
  db: Kysely<Database> | Transaction<Database>,
  values: Insertable<AuditEventsTable>,
): Promise<AuditRow> {
  return db.insertInto('audit_events').values(values).returningAll().executeTakeFirstOrThrow();
}

/** Deletes the events older than the 90-day window; answers how many. */
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

/** The newest `limit` events that match, and how many match in all. */
export async function selectAuditEvents(
  db: Kysely<Database>,
  f: AuditFilter,
): Promise<{ rows: AuditRow[]; total: number }> {
  let q = db.selectFrom('audit_events').where('created_at', '>=', sql<Date>`now() - make_interval(days => ${f.days})`);
  if (f.type) q = q.where('event_type', '=', f.type);
  if (f.session) q = q.where('session_id', '=', f.session);
  if (f.clientIds !== null) {
    if (f.clientIds.length === 0) return { rows: [], total: 0 };
    q = q.where('client_id', 'in', f.clientIds);
  }
  const [rows, count] = await Promise.all([
    q.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(f.limit).execute(),
    q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

/** Inserts many events in one statement per thousand. */
export async function insertAuditEvents(
  db: Kysely<Database> | Transaction<Database>,
  values: Insertable<AuditEventsTable>[],
): Promise<AuditRow[]> {
  const out: AuditRow[] = [];
  for (let i = 0; i < values.length; i += 1000)
    out.push(
      ...(await db
        .insertInto('audit_events')
        .values(values.slice(i, i + 1000))
        .returningAll()
        .execute()),
    );
  return out;
}
