import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/schema.ts';

/** The overview's reads, each within `scope` (the client ids a user may see; null: every client). */

type Scope = readonly string[] | null;

const inScope = (scope: Scope) =>
  scope === null ? sql<boolean>`TRUE` : sql<boolean>`client_id = ANY(${scope}::text[])`;

/** Rows the risk chart reads at most; far above a few clients' daily scans over a year. */
const MAX_POINTS = 5000;

/** Sessions with a risk score scanned since `since`, by client, target, then scan time. */
export function riskPoints(db: Kysely<Database>, scope: Scope, since: Date) {
  return db
    .selectFrom('sessions')
    .select(['client_id', 'client', 'session_id', 'target', 'scanned_at', 'risk_score', 'risk_grade'])
    .where(inScope(scope))
    .where('scanned_at', '>=', since)
    .where('risk_score', 'is not', null)
    .orderBy('client_id')
    .orderBy('target')
    .orderBy('scanned_at')
    .orderBy('session_id')
    .limit(MAX_POINTS)
    .execute();
}

/**
 * Agents by state: online (heard from within the stale threshold), stale (registered, not
 * heard from since), deregistered. `staleBefore`: a heartbeat received at or before it is stale.
 */
export async function fleetCounts(db: Kysely<Database>, scope: Scope, staleBefore: Date) {
  const row = await db
    .selectFrom('agents')
    .select([
      sql<string>`count(*) FILTER (WHERE deregistered_at IS NULL AND received_at > ${staleBefore})`.as('online'),
      sql<string>`count(*) FILTER (WHERE deregistered_at IS NULL AND received_at <= ${staleBefore})`.as('stale'),
      sql<string>`count(*) FILTER (WHERE deregistered_at IS NOT NULL)`.as('deregistered'),
    ])
    .where(inScope(scope))
    .executeTakeFirstOrThrow();
  return { online: Number(row.online), stale: Number(row.stale), deregistered: Number(row.deregistered) };
}

/** Sessions that expire after `now` and by `until`, the soonest first (at most `limit`), and how many there are. */
export async function expiringSessions(db: Kysely<Database>, scope: Scope, now: Date, until: Date, limit: number) {
  const q = db
    .selectFrom('sessions')
    .where(inScope(scope))
    .where('expires_at', '>', now)
    .where('expires_at', '<=', until);
  const [rows, count] = await Promise.all([
    q
      .select(['session_id', 'client_id', 'client', 'target', 'expires_at'])
      .orderBy('expires_at')
      .orderBy('session_id')
      .orderBy('client_id')
      .limit(limit)
      .execute(),
    q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

/**
 * The most frequent open findings of record (docs/findings-of-record.md): open, not a false
 * positive, no exception in effect on `today`; how many targets have a title open, and how many
 * findings that makes.
 */
export async function topOpenFindings(db: Kysely<Database>, scope: Scope, limit: number, today: string) {
  const { rows } = await sql<{ title: string; severity: string | null; targets: string; open: string }>`
    SELECT title,
      (array_agg(severity ORDER BY severity_key DESC))[1] AS severity,
      count(DISTINCT (client_id, target))::text AS targets,
      count(*)::text AS open
    FROM finding_records
    WHERE ${inScope(scope)} AND status <> 'resolved' AND disposition IS NULL
      AND NOT (exception_reason IS NOT NULL AND (exception_expiry IS NULL OR exception_expiry >= ${today}))
    GROUP BY title
    ORDER BY count(DISTINCT (client_id, target)) DESC, count(*) DESC, title
    LIMIT ${limit}
  `.execute(db);
  return rows.map((r) => ({ title: r.title, severity: r.severity, targets: Number(r.targets), open: Number(r.open) }));
}

/** Registered agents per client whose last heartbeat was received at or before `staleBefore`. */
export async function staleAgentsByClient(db: Kysely<Database>, scope: Scope, staleBefore: Date) {
  const rows = await db
    .selectFrom('agents')
    .select(['client_id', (eb) => eb.fn.countAll<string>().as('n')])
    .where(inScope(scope))
    .where('deregistered_at', 'is', null)
    .where('received_at', '<=', staleBefore)
    .groupBy('client_id')
    .execute();
  return new Map(rows.map((r) => [r.client_id, Number(r.n)]));
}

/** Each client's name as its newest named session gives it. */
export async function clientNames(db: Kysely<Database>, scope: Scope) {
  const { rows } = await sql<{ client_id: string; client: string }>`
    SELECT DISTINCT ON (client_id) client_id, client FROM sessions
    WHERE ${inScope(scope)} AND client IS NOT NULL
    ORDER BY client_id, uploaded_at DESC
  `.execute(db);
  return new Map(rows.map((r) => [r.client_id, r.client]));
}

/** The newest `perTarget` scored sessions of every target (sessions_peer_idx), oldest first within a target. */
export async function targetTrends(db: Kysely<Database>, scope: Scope, perTarget: number) {
  const { rows } = await sql<{
    client_id: string;
    target: string;
    session_id: string;
    scanned_at: Date;
    risk_score: number;
    risk_grade: string | null;
  }>`
    SELECT client_id, target, session_id, scanned_at, risk_score, risk_grade FROM (
      SELECT client_id, target, session_id, scanned_at, risk_score, risk_grade,
        row_number() OVER (PARTITION BY client_id, target ORDER BY scanned_at DESC, session_id DESC) AS n
      FROM sessions
      WHERE ${inScope(scope)} AND target IS NOT NULL AND risk_score IS NOT NULL
    ) s WHERE n <= ${perTarget}
    ORDER BY client_id, target, scanned_at, session_id
  `.execute(db);
  return rows;
}
