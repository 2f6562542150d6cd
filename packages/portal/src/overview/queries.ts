import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/schema.ts';
import { severityOfKey } from '../records/model.ts';

/** The overview's reads, each within `scope` (the client ids a user may see; null: every client). */

type Scope = readonly string[] | null;

const inScope = (scope: Scope) =>
  scope === null ? sql<boolean>`TRUE` : sql<boolean>`client_id = ANY(${scope}::text[])`;

/** A scored session of a target the risk chart answers, with how many targets it could have answered. */
interface RiskPointRow {
  client_id: string;
  target: string | null;
  /** Targets in scope with a scored scan since `since`. */
  total: string;
  session_id: string;
  client: string | null;
  scanned_at: Date;
  risk_score: number;
  risk_grade: string | null;
}

/**
 * The `targets` targets whose newest scored scan since `since` scored highest (target_latest_risk,
 * migration 0035: one row per target), each with its newest `perTarget` scored scans since then
 * (sessions_trend_idx); by client, target, then scan time. A target of NULL is read by its own
 * branch, so both stay index ranges.
 */
export async function riskPoints(db: Kysely<Database>, scope: Scope, since: Date, targets: number, perTarget: number) {
  const columns = sql`s.session_id, s.client, s.scanned_at, s.risk_score, s.risk_grade`;
  const newest = sql`s.risk_score IS NOT NULL AND s.scanned_at >= ${since} ORDER BY s.scanned_at DESC, s.session_id DESC LIMIT ${perTarget}`;
  const { rows } = await sql<RiskPointRow>`
    WITH chosen AS (
      SELECT client_id, target, count(*) OVER () AS total FROM target_latest_risk
      WHERE ${inScope(scope)} AND scanned_at >= ${since}
      ORDER BY risk_score DESC, scanned_at DESC, session_id DESC
      LIMIT ${targets}
    )
    SELECT c.client_id, c.target, c.total, p.* FROM chosen c CROSS JOIN LATERAL (
      (SELECT ${columns} FROM sessions s
        WHERE c.target IS NOT NULL AND s.client_id = c.client_id AND s.target = c.target AND ${newest})
      UNION ALL
      (SELECT ${columns} FROM sessions s
        WHERE c.target IS NULL AND s.client_id = c.client_id AND s.target IS NULL AND ${newest})
    ) p
    ORDER BY c.client_id, c.target, p.scanned_at, p.session_id
  `.execute(db);
  return rows;
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
 * findings that makes. Grouped by (title, client, target) first and then by title: two hash
 * aggregates, where one group per title with a distinct count sorted every open record (2.6 s
 * against 1.4 s at 1,000,000 records, bench/README.md).
 */
export async function topOpenFindings(db: Kysely<Database>, scope: Scope, limit: number, today: string) {
  const { rows } = await sql<{ title: string; severity_key: number; targets: string; open: string }>`
    SELECT title, max(k) AS severity_key, count(*)::text AS targets, sum(n)::text AS open
    FROM (
      SELECT title, max(severity_key) AS k, count(*) AS n
      FROM finding_records
      WHERE ${inScope(scope)} AND is_open AND disposition IS NULL
        AND NOT (exception_reason IS NOT NULL AND (exception_expiry IS NULL OR exception_expiry >= ${today}))
      GROUP BY title, client_id, target
    ) per_target
    GROUP BY title
    ORDER BY count(*) DESC, sum(n) DESC, title
    LIMIT ${limit}
  `.execute(db);
  return rows.map((r) => ({
    title: r.title,
    severity: severityOfKey(r.severity_key),
    targets: Number(r.targets),
    open: Number(r.open),
  }));
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

/**
 * Each listed client's name as its newest named session gives it (newest upload, then the
 * greater session id): one probe of sessions_client_uploaded_idx per client.
 */
export async function clientNames(db: Kysely<Database>, clientIds: readonly string[]) {
  if (clientIds.length === 0) return new Map<string, string>();
  const { rows } = await sql<{ client_id: string; client: string }>`
    SELECT c.client_id, n.client FROM unnest(${clientIds}::text[]) AS c(client_id)
    CROSS JOIN LATERAL (
      SELECT s.client FROM sessions s WHERE s.client_id = c.client_id AND s.client IS NOT NULL
      ORDER BY s.uploaded_at DESC, s.session_id DESC LIMIT 1
    ) n
  `.execute(db);
  return new Map(rows.map((r) => [r.client_id, r.client]));
}

/**
 * The newest `perTarget` scored sessions of each listed target, in the order listed and oldest
 * first within a target: the first rows of sessions_trend_idx (migration 0033) per target,
 * however many sessions it has.
 */
export async function targetTrends(
  db: Kysely<Database>,
  targets: readonly { client_id: string; target: string }[],
  perTarget: number,
) {
  if (targets.length === 0) return [];
  const { rows } = await sql<{
    client_id: string;
    target: string;
    session_id: string;
    scanned_at: Date;
    risk_score: number;
    risk_grade: string | null;
  }>`
    SELECT p.client_id, p.target, t.session_id, t.scanned_at, t.risk_score, t.risk_grade
    FROM unnest(${targets.map((t) => t.client_id)}::text[], ${targets.map((t) => t.target)}::text[])
      WITH ORDINALITY AS p(client_id, target, i)
    CROSS JOIN LATERAL (
      SELECT s.session_id, s.scanned_at, s.risk_score, s.risk_grade FROM sessions s
      WHERE s.client_id = p.client_id AND s.target = p.target AND s.risk_score IS NOT NULL
      ORDER BY s.scanned_at DESC, s.session_id DESC LIMIT ${perTarget}
    ) t
    ORDER BY p.i, t.scanned_at, t.session_id
  `.execute(db);
  return rows;
}
