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
  type?: AuditEventType | undefined;
  session?: string | undefined;
  /** null: every client (admins); otherwise only these client ids. */
  clientIds: string[] | null;
  limit: number;
}

/**
 * How many events of the window (of one type, or all): the closed hours' counts (migration
 * 0032), plus live counts of the window's first hour (partly in it) and of the hours not yet
 * closed. One statement, so one snapshot of the counts and the events.
 */
async function countAuditWindow(db: Kysely<Database>, days: number, type?: AuditEventType): Promise<number> {
  const ofType = type === undefined ? sql`TRUE` : sql`e.event_type = ${type}`;
  const hours =
    type === undefined
      ? sql`SELECT coalesce(sum(h.n), 0) FROM audit_event_hours h, b WHERE h.hour >= b.lo AND h.hour < b.hi`
      : sql`SELECT coalesce(sum(h.n), 0) FROM audit_event_type_hours h, b
            WHERE h.event_type = ${type} AND h.hour >= b.lo AND h.hour < b.hi`;
  const { rows } = await sql<{ n: string }>`
    WITH b AS MATERIALIZED (
      SELECT since, lo, greatest(lo, coalesce((SELECT until FROM audit_event_hours_closed), '-infinity')) AS hi
      FROM (SELECT s AS since, audit_hour(s) + interval '1 hour' AS lo
            FROM (SELECT now() - make_interval(days => ${days}) AS s) x) w
    )
    SELECT ((SELECT count(*) FROM audit_events e, b WHERE e.created_at >= b.since AND e.created_at < b.lo AND ${ofType})
      + (${hours})
      + (SELECT count(*) FROM audit_events e, b WHERE e.created_at >= b.hi AND ${ofType}))::text AS n
  `.execute(db);
  return Number(rows[0]?.n);
}

/**
 * Every event: the closed hours' counts plus a live count from the first hour not closed. A
 * fragment of db-health's one-statement table counts. The bounds come from a materialised CTE
 * (here and in countAuditWindow): PostgreSQL cannot know them when planning, and guessing a
 * third of the table it would start parallel workers, which cost more than the few hundred
 * events counted live.
 */
export const auditEventsCounted = sql<number>`(
  WITH c AS MATERIALIZED (SELECT coalesce((SELECT until FROM audit_event_hours_closed), '-infinity') AS until)
  SELECT (SELECT coalesce(sum(n), 0) FROM audit_event_hours)
    + (SELECT count(*) FROM audit_events e, c WHERE e.created_at >= c.until))`;

/**
 * Closes the hours before the current one (migration 0032), a day of them per statement until
 * none is left; another replica already at it makes this return. Answers how many it closed.
 */
export async function closeAuditHours(db: Kysely<Database>, maxDays = 100): Promise<number> {
  let closed = 0;
  for (let i = 0; i < maxDays; i++) {
    const { rows } = await sql<{ n: number }>`SELECT audit_event_hours_close(24) AS n`.execute(db);
    const n = rows[0]?.n ?? 0;
    if (n === 0) break;
    closed += n;
  }
  return closed;
}

/**
 * The newest `limit` events that match, and how many match in all. The window alone, or with a
 * type, is counted from the closed hours; a session or client filter counts its events (the
 * hours hold no session or client, and those filters select few events through their indexes).
 */
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
  const byHours = !f.session && f.clientIds === null;
  const [rows, total] = await Promise.all([
    q.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(f.limit).execute(),
    byHours
      ? countAuditWindow(db, f.days, f.type || undefined)
      : q
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow()
          .then((c) => Number(c.n)),
  ]);
  return { rows, total };
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
