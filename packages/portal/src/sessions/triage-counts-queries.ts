import { type Kysely, type Selectable, sql } from 'kysely';
import type { Database, SessionTriageCountsTable } from '../db/schema.ts';
import type { TriageChange } from '../records/model.ts';
import type { TargetRef } from '../records/queries.ts';
import type { SessionRef } from './queries.ts';

/**
 * The SQL of the session triage counts (migration 0017): how many of a session's findings
 * are in each triage state, so listings compute every session's scores and summaries from a
 * few rows. A finding of the session counts as its record stands now; a record the session
 * resolved counts as resolved; a row without a record (a finding no key could be made for, or
 * of a session indexed before its target had records) counts as its file's entry says.
 */

export type CountRow = Selectable<SessionTriageCountsTable>;

type SessionKey = SessionRef;

/** Counts one session from scratch (its index rows and the records of its target). */
export async function recountSession(db: Kysely<Database>, s: SessionKey, target: string): Promise<void> {
  await db
    .deleteFrom('session_triage_counts')
    .where('client_id', '=', s.clientId)
    .where('session_id', '=', s.sessionId)
    .execute();
  await sql`
    INSERT INTO session_triage_counts
      (client_id, session_id, in_scan, status, false_positive, exception_expiry, severity, score_severity, n)
    SELECT sf.client_id, sf.session_id, sf.in_scan,
      CASE WHEN NOT sf.in_scan THEN 'resolved' WHEN r.fingerprint IS NULL THEN COALESCE(sf.status, 'new') ELSE r.status END,
      CASE WHEN sf.in_scan AND r.fingerprint IS NOT NULL THEN r.disposition IS NOT DISTINCT FROM 'false_positive' ELSE false END,
      CASE
        WHEN NOT sf.in_scan THEN ''
        WHEN r.fingerprint IS NULL THEN
          CASE WHEN sf.exception_status IS NULL THEN ''
               WHEN sf.exception_expired THEN '0000-00-00'
               ELSE COALESCE(sf.exception_expiry, 'never') END
        WHEN r.exception_reason IS NULL THEN ''
        ELSE COALESCE(r.exception_expiry, 'never')
      END,
      COALESCE(sf.severity, ''), COALESCE(sf.score_severity, ''), count(*)
    FROM session_findings sf
    LEFT JOIN LATERAL (
      SELECT fr.fingerprint, fr.status, fr.disposition, fr.exception_reason, fr.exception_expiry FROM finding_records fr
      WHERE fr.client_id = sf.client_id AND fr.target = ${target} AND fr.fingerprint = sf.fingerprint
      LIMIT 1
    ) r ON TRUE
    WHERE sf.client_id = ${s.clientId} AND sf.session_id = ${s.sessionId} AND (sf.in_scan OR sf.change = 'resolved')
    GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
  `.execute(db);
}

/**
 * Moves the findings of changed records from their old triage state to their new one in
 * every indexed session of the target that holds them. Returns the sessions touched.
 */
export async function applyTriageChanges(
  db: Kysely<Database>,
  t: TargetRef,
  changes: readonly TriageChange[],
): Promise<string[]> {
  if (changes.length === 0) return [];
  const col = <K extends keyof TriageChange['before']>(side: 'before' | 'after', k: K) =>
    changes.map((c) => String(c[side][k]));
  const { rows } = await sql<{ session_id: string }>`
    WITH ch AS (
      SELECT * FROM unnest(
        ${sql.val(changes.map((c) => c.fingerprint))}::text[],
        ${sql.val(col('before', 'status'))}::text[], ${sql.val(col('before', 'falsePositive'))}::boolean[],
        ${sql.val(col('before', 'exception'))}::text[],
        ${sql.val(col('after', 'status'))}::text[], ${sql.val(col('after', 'falsePositive'))}::boolean[],
        ${sql.val(col('after', 'exception'))}::text[]
      ) AS c(fp, b_status, b_fp, b_exc, a_status, a_fp, a_exc)
    ), hits AS (
      -- Looked up per change by (client, fingerprint), whatever the planner thinks of fresh tables.
      SELECT sf.session_id, COALESCE(sf.severity, '') AS sev, COALESCE(sf.score_severity, '') AS ssev, ch.*
      FROM ch
      CROSS JOIN LATERAL (
        SELECT f.session_id, f.severity, f.score_severity FROM session_findings f
        WHERE f.client_id = ${t.clientId} AND f.fingerprint = ch.fp AND f.in_scan
        OFFSET 0
      ) sf
      WHERE EXISTS (
        SELECT 1 FROM sessions s WHERE s.client_id = ${t.clientId} AND s.session_id = sf.session_id
          AND btrim(COALESCE(s.target, '')) = ${t.target})
    ), deltas AS (
      SELECT session_id, b_status AS status, b_fp AS fp, b_exc AS exc, sev, ssev, -count(*) AS n
        FROM hits GROUP BY 1, 2, 3, 4, 5, 6
      UNION ALL
      SELECT session_id, a_status, a_fp, a_exc, sev, ssev, count(*) FROM hits GROUP BY 1, 2, 3, 4, 5, 6
    ), summed AS (
      SELECT session_id, status, fp, exc, sev, ssev, sum(n)::integer AS n FROM deltas
      GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(n) <> 0
    )
    INSERT INTO session_triage_counts AS t
      (client_id, session_id, in_scan, status, false_positive, exception_expiry, severity, score_severity, n)
    SELECT ${t.clientId}, session_id, TRUE, status, fp, exc, sev, ssev, n FROM summed
    ON CONFLICT (client_id, session_id, in_scan, status, false_positive, exception_expiry, severity, score_severity)
      DO UPDATE SET n = t.n + EXCLUDED.n
    RETURNING session_id
  `.execute(db);
  const sessions = [...new Set(rows.map((r) => r.session_id))];
  if (sessions.length > 0)
    await db
      .deleteFrom('session_triage_counts')
      .where('client_id', '=', t.clientId)
      .where('session_id', 'in', sessions)
      .where('n', '<=', 0)
      .execute();
  return sessions;
}

/** The counts of some sessions. */
export async function countsOf(db: Kysely<Database>, sessions: readonly SessionKey[]): Promise<CountRow[]> {
  if (sessions.length === 0) return [];
  return db
    .selectFrom('session_triage_counts')
    .selectAll()
    .where((eb) =>
      eb.or(sessions.map((s) => eb.and([eb('client_id', '=', s.clientId), eb('session_id', '=', s.sessionId)]))),
    )
    .execute();
}

export async function lastTriageChange(db: Kysely<Database>, s: SessionKey, target: string): Promise<Date | null> {
  const { rows } = await sql<{ at: Date | null }>`
    SELECT max(h.at) AS at FROM finding_history h
    WHERE h.client_id = ${s.clientId} AND h.target = ${target}
      AND h.field <> 'claim'
      AND h.fingerprint IN (
        SELECT sf.fingerprint FROM session_findings sf WHERE sf.client_id = ${s.clientId} AND sf.session_id = ${s.sessionId})
  `.execute(db);
  return rows[0]?.at ?? null;
}
