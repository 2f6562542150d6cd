import { type Kysely, type Selectable, sql } from 'kysely';
import type { Database, SessionTriageCountsTable } from '../db/schema.ts';
import { arrayParam, pgArrayLiteral } from '../db/bulk.ts';
import { countsAsDue, type TriageChange, type TriageKey } from '../records/model.ts';
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

/**
 * Counts one session from scratch (its index rows and the records of its target): its triage
 * counts and its due counts (migration 0043) from one read of its rows, and its rows by change;
 * the last two then valid for the file its state row names.
 */
export async function recountSession(db: Kysely<Database>, s: SessionKey, target: string): Promise<void> {
  for (const table of ['session_triage_counts', 'session_due_counts'] as const)
    await db.deleteFrom(table).where('client_id', '=', s.clientId).where('session_id', '=', s.sessionId).execute();
  await sql`
    WITH rows AS MATERIALIZED (
      SELECT sf.in_scan, sf.status AS file_status, sf.exception_status, sf.exception_expired,
        sf.exception_expiry AS file_expiry, sf.severity, sf.score_severity,
        r.fingerprint AS record, r.status, r.disposition, r.exception_reason, r.exception_expiry, r.due_date
      FROM session_findings sf
      LEFT JOIN LATERAL (
        SELECT fr.fingerprint, fr.status, fr.disposition, fr.exception_reason, fr.exception_expiry, fr.due_date
        FROM finding_records fr
        WHERE fr.client_id = sf.client_id AND fr.target = ${target} AND fr.fingerprint = sf.fingerprint
        LIMIT 1
      ) r ON TRUE
      WHERE sf.client_id = ${s.clientId} AND sf.session_id = ${s.sessionId} AND (sf.in_scan OR sf.change = 'resolved')
    ), triage AS (
      INSERT INTO session_triage_counts
        (client_id, session_id, in_scan, status, false_positive, exception_expiry, severity, score_severity, n)
      SELECT ${s.clientId}, ${s.sessionId}, in_scan,
        CASE WHEN NOT in_scan THEN 'resolved' WHEN record IS NULL THEN COALESCE(file_status, 'new') ELSE status END,
        CASE WHEN in_scan AND record IS NOT NULL THEN disposition IS NOT DISTINCT FROM 'false_positive' ELSE false END,
        CASE
          WHEN NOT in_scan THEN ''
          WHEN record IS NULL THEN
            CASE WHEN exception_status IS NULL THEN ''
                 WHEN exception_expired THEN '0000-00-00'
                 ELSE COALESCE(file_expiry, 'never') END
          WHEN exception_reason IS NULL THEN ''
          ELSE COALESCE(exception_expiry, 'never')
        END,
        COALESCE(severity, ''), COALESCE(score_severity, ''), count(*)
      FROM rows
      GROUP BY 3, 4, 5, 6, 7, 8
    )
    INSERT INTO session_due_counts (client_id, session_id, due_date, exception_expiry, n)
    SELECT ${s.clientId}, ${s.sessionId}, due_date,
      CASE WHEN exception_reason IS NULL THEN '' ELSE COALESCE(exception_expiry, 'never') END, count(*)
    FROM rows
    WHERE in_scan AND record IS NOT NULL AND status <> 'resolved' AND disposition IS NULL AND due_date IS NOT NULL
    GROUP BY 3, 4
  `.execute(db);
  await sql`
    UPDATE session_findings_state SET due_counted_key = file_key, change_counts = (
      SELECT COALESCE(jsonb_object_agg(c.change, c.n), '{}'::jsonb) FROM (
        SELECT change, count(*) AS n FROM session_findings
        WHERE client_id = ${s.clientId} AND session_id = ${s.sessionId} AND change IS NOT NULL
        GROUP BY change
      ) c)
    WHERE client_id = ${s.clientId} AND session_id = ${s.sessionId}
  `.execute(db);
}

/**
 * Moves the findings of changed records from their old triage state to their new one in
 * every indexed session of the target that holds them. Returns the sessions touched.
 * `except` is a session left out: the upload being merged, which recountSession counts from
 * scratch right after (so its rows are not looked up for nothing).
 *
 * The findings are read with one single-table query and the moves summed here: a join of the
 * changes with the findings index per change was at the planner's mercy, and on a new client's
 * statistics (no row of it sampled yet) it probed by the wrong index, a 100,000-change rescan
 * taking many minutes. Whatever index this query gets, it reads each finding at most once.
 */
export async function applyTriageChanges(
  db: Kysely<Database>,
  t: TargetRef,
  changes: readonly TriageChange[],
  except?: string,
): Promise<string[]> {
  if (changes.length === 0) return [];
  const held = await db
    .selectFrom('sessions')
    .select('session_id')
    .where('client_id', '=', t.clientId)
    .where(sql<string>`btrim(COALESCE(target, ''))`, '=', t.target)
    .$if(except !== undefined, (q) => q.where('session_id', '<>', except as string))
    .execute();
  if (held.length === 0) return [];
  const byFingerprint = new Map<string, TriageChange[]>();
  for (const c of changes) {
    const list = byFingerprint.get(c.fingerprint);
    if (list === undefined) byFingerprint.set(c.fingerprint, [c]);
    else list.push(c);
  }
  const hits = await db
    .selectFrom('session_findings')
    .select(['session_id', 'fingerprint', 'severity', 'score_severity'])
    .where('client_id', '=', t.clientId)
    .where('session_id', '=', sql<string>`ANY(${pgArrayLiteral(held.map((h) => h.session_id))}::text[])`)
    .where('in_scan', '=', true)
    .where('fingerprint', '=', sql<string>`ANY(${pgArrayLiteral([...byFingerprint.keys()])}::text[])`)
    .execute();

  // Per session and count row: minus the findings leaving it, plus those entering it.
  const moves = new Map<string, CountMove>();
  const move = (sessionId: string, k: TriageKey, sev: string, ssev: string, n: number) => {
    const id = JSON.stringify([sessionId, k.status, k.falsePositive, k.exception, sev, ssev]);
    const m = moves.get(id);
    if (m === undefined) moves.set(id, { sessionId, key: k, sev, ssev, n });
    else m.n += n;
  };
  const dueMoves = new Map<string, DueMove>();
  const dueMove = (sessionId: string, k: TriageKey, n: number) => {
    if (!countsAsDue(k)) return;
    const id = JSON.stringify([sessionId, k.due, k.exception]);
    const m = dueMoves.get(id);
    if (m === undefined) dueMoves.set(id, { sessionId, due: k.due, exception: k.exception, n });
    else m.n += n;
  };
  const dueCounted = await dueCountedSessions(db, t.clientId, [...new Set(hits.map((h) => h.session_id))]);
  for (const h of hits) {
    for (const c of byFingerprint.get(h.fingerprint ?? '') ?? []) {
      move(h.session_id, c.before, h.severity ?? '', h.score_severity ?? '', -1);
      move(h.session_id, c.after, h.severity ?? '', h.score_severity ?? '', 1);
      if (dueCounted.has(h.session_id)) {
        dueMove(h.session_id, c.before, -1);
        dueMove(h.session_id, c.after, 1);
      }
    }
  }
  const dueNet = [...dueMoves.values()].filter((m) => m.n !== 0);
  await addToCounts(db, 'session_due_counts', t.clientId, dueNet, [
    ['due_date', 'text', (m) => m.due],
    ['exception_expiry', 'text', (m) => m.exception],
  ]);
  const net = [...moves.values()].filter((m) => m.n !== 0);
  await addToCounts(db, 'session_triage_counts', t.clientId, net, [
    ['in_scan', 'boolean', () => true],
    ['status', 'text', (m) => m.key.status],
    ['false_positive', 'boolean', (m) => m.key.falsePositive],
    ['exception_expiry', 'text', (m) => m.key.exception],
    ['severity', 'text', (m) => m.sev],
    ['score_severity', 'text', (m) => m.ssev],
  ]);
  return [...new Set(net.map((m) => m.sessionId))];
}

/**
 * Adds each move's signed `n` to its session's count row of `table` (the row named by the key
 * columns, created when missing), then drops the rows left at zero or below.
 */
async function addToCounts<M extends { sessionId: string; n: number }>(
  db: Kysely<Database>,
  table: 'session_triage_counts' | 'session_due_counts',
  clientId: string,
  moves: readonly M[],
  keys: readonly (readonly [column: string, type: string, value: (m: M) => unknown])[],
): Promise<void> {
  if (moves.length === 0) return;
  const names = keys.map(([c]) => c);
  const columns = sql.raw(names.join(', '));
  const arrays = [
    arrayParam(
      moves.map((m) => m.sessionId),
      'text',
    ),
    ...keys.map(([, type, value]) => arrayParam(moves.map(value), type)),
    arrayParam(
      moves.map((m) => m.n),
      'integer',
    ),
  ];
  await sql`
    INSERT INTO ${sql.table(table)} AS t (client_id, session_id, ${columns}, n)
    SELECT ${clientId}, x.session_id, ${sql.raw(names.map((c) => `x.${c}`).join(', '))}, x.n
    FROM unnest(${sql.join(arrays)}) AS x(session_id, ${columns}, n)
    ON CONFLICT (client_id, session_id, ${columns}) DO UPDATE SET n = t.n + EXCLUDED.n
  `.execute(db);
  await db
    .deleteFrom(table)
    .where('client_id', '=', clientId)
    .where('session_id', 'in', [...new Set(moves.map((m) => m.sessionId))])
    .where('n', '<=', 0)
    .execute();
}

interface CountMove {
  sessionId: string;
  key: TriageKey;
  sev: string;
  ssev: string;
  n: number;
}

interface DueMove {
  sessionId: string;
  due: string;
  exception: string;
  n: number;
}

/** The sessions among `sessionIds` whose due counts are valid (their state names the file they counted). */
async function dueCountedSessions(
  db: Kysely<Database>,
  clientId: string,
  sessionIds: readonly string[],
): Promise<Set<string>> {
  if (sessionIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('session_findings_state')
    .select('session_id')
    .where('client_id', '=', clientId)
    .where('session_id', '=', sql<string>`ANY(${pgArrayLiteral(sessionIds)}::text[])`)
    .where('due_counted_key', '=', sql<string>`file_key`)
    .execute();
  return new Set(rows.map((r) => r.session_id));
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

/** Up to `limit` indexed sessions whose due counts do not count their stored file (migration 0043), newest first. */
export function uncountedSessions(
  db: Kysely<Database>,
  limit: number,
): Promise<{ client_id: string; session_id: string; target: string | null }[]> {
  return db
    .selectFrom('session_findings_state as st')
    .innerJoin('sessions as s', (j) =>
      j.onRef('s.client_id', '=', 'st.client_id').onRef('s.session_id', '=', 'st.session_id'),
    )
    .select(['st.client_id', 'st.session_id', 's.target'])
    .where(sql<boolean>`st.due_counted_key IS DISTINCT FROM st.file_key`)
    .orderBy('s.scanned_at', 'desc')
    .limit(limit)
    .execute();
}

/** Locks a session's index state row; true when its due counts do not count its stored file. */
export async function lockUncounted(db: Kysely<Database>, s: SessionKey): Promise<boolean> {
  const row = await db
    .selectFrom('session_findings_state')
    .select(sql<boolean>`due_counted_key IS DISTINCT FROM file_key`.as('uncounted'))
    .where('client_id', '=', s.clientId)
    .where('session_id', '=', s.sessionId)
    .forUpdate()
    .executeTakeFirst();
  return row?.uncounted === true;
}
