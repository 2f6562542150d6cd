import { type Kysely, type RawBuilder, type Selectable, sql } from 'kysely';
import type { Database, FindingHistoryTable, FindingTargetsTable } from '../db/schema.ts';
import { arrayParam, chunksOf, pipelined, textListCell } from '../db/bulk.ts';
import { type HistoryLine, type RecordRow, SEEN_IN_KEPT } from './model.ts';

/** The SQL of the findings of record: targets, records, history and due-date settings. */

export interface TargetRef {
  clientId: string;
  target: string;
}

/** The advisory lock of one target's records. */
const targetLock = (clientId: string, target: string | RawBuilder<string>) =>
  sql`pg_advisory_xact_lock(hashtext(${`records:${clientId}`}), hashtext(${target}))`;

/** Serialises every writer of one target's records (uploads, triage, seeding) until the transaction ends. */
export async function lockTarget(db: Kysely<Database>, t: TargetRef): Promise<void> {
  await sql`SELECT ${targetLock(t.clientId, t.target)}`.execute(db);
}

/** lockTarget for every target of a client, in the targets' order, in one statement. */
export async function lockTargetsOfClient(db: Kysely<Database>, clientId: string): Promise<void> {
  await sql`
    SELECT ${targetLock(clientId, sql<string>`t.target`)}
    FROM (SELECT target FROM finding_targets WHERE client_id = ${clientId} ORDER BY target) t
  `.execute(db);
}

export function targetRow(db: Kysely<Database>, t: TargetRef): Promise<Selectable<FindingTargetsTable> | undefined> {
  return db
    .selectFrom('finding_targets')
    .selectAll()
    .where('client_id', '=', t.clientId)
    .where('target', '=', t.target)
    .executeTakeFirst();
}

/** Creates the target's row (seeded now) when it has none. */
export async function ensureTargetRow(db: Kysely<Database>, t: TargetRef, seededAt: Date): Promise<void> {
  await db
    .insertInto('finding_targets')
    .values({ client_id: t.clientId, target: t.target, seeded_at: seededAt })
    .onConflict((oc) => oc.columns(['client_id', 'target']).doNothing())
    .execute();
}

/** What the target's latest merged session was and what it looked at. */
export async function setLastSession(
  db: Kysely<Database>,
  t: TargetRef,
  s: { sessionId: string; scannedAt: Date; coverage: unknown; now: Date },
): Promise<void> {
  await db
    .updateTable('finding_targets')
    .set({
      last_session_id: s.sessionId,
      last_scanned_at: s.scannedAt,
      last_coverage: JSON.stringify(s.coverage),
      updated_at: s.now,
    })
    .where('client_id', '=', t.clientId)
    .where('target', '=', t.target)
    .where((eb) => eb.or([eb('last_scanned_at', 'is', null), eb('last_scanned_at', '<=', s.scannedAt)]))
    .execute();
}

/** The targets of `clientIds` (null: all), optionally one. */
export function targetsOf(db: Kysely<Database>, clientIds: readonly string[] | null, target: string | undefined) {
  let q = db
    .selectFrom('finding_targets as t')
    .select([
      't.client_id',
      't.target',
      't.last_session_id',
      't.last_scanned_at',
      't.last_coverage',
      sql<string>`(SELECT count(*) FROM finding_records r WHERE r.client_id = t.client_id AND r.target = t.target AND r.status <> 'resolved')`.as(
        'open',
      ),
      sql<string>`(SELECT count(*) FROM finding_records r WHERE r.client_id = t.client_id AND r.target = t.target AND r.status = 'resolved')`.as(
        'resolved',
      ),
    ]);
  if (clientIds !== null) q = q.where('t.client_id', 'in', clientIds.length === 0 ? [''] : clientIds);
  if (target !== undefined) q = q.where('t.target', '=', target);
  return q.orderBy('t.client_id').orderBy('t.target').limit(1000).execute();
}

/** Every record of a target, by fingerprint. */
export async function recordsOfTarget(db: Kysely<Database>, t: TargetRef): Promise<Map<string, RecordRow>> {
  const rows = await db
    .selectFrom('finding_records')
    .selectAll()
    .where('client_id', '=', t.clientId)
    .where('target', '=', t.target)
    .execute();
  return new Map(rows.map((r) => [r.fingerprint, r]));
}

/** Some records of a target, by fingerprint. */
export async function recordsByFingerprint(
  db: Kysely<Database>,
  t: TargetRef,
  fingerprints: readonly string[],
): Promise<RecordRow[]> {
  if (fingerprints.length === 0) return [];
  return db
    .selectFrom('finding_records')
    .selectAll()
    .where('client_id', '=', t.clientId)
    .where('target', '=', t.target)
    .where('fingerprint', '=', sql<string>`ANY(${sql.val([...fingerprints])}::text[])`)
    .execute();
}

// Columns written from JS, with the SQL type unnest reads each as (ARRAYS: a text list per row).
const COLUMNS: readonly (readonly [string, string])[] = [
  ['client_id', 'text'],
  ['target', 'text'],
  ['fingerprint', 'text'],
  ['title', 'text'],
  ['severity', 'text'],
  ['severity_key', 'smallint'],
  ['rule_id', 'text'],
  ['host', 'text'],
  ['port', 'integer'],
  ['protocol', 'text'],
  ['cve_ids', 'text'],
  ['kev', 'boolean'],
  ['epss', 'double precision'],
  ['status', 'text'],
  ['status_changed', 'timestamptz'],
  ['status_source', 'text'],
  ['status_by', 'text'],
  ['prior_status', 'text'],
  ['note', 'text'],
  ['note_source', 'text'],
  ['note_by', 'text'],
  ['note_at', 'timestamptz'],
  ['exception_reason', 'text'],
  ['exception_approver', 'text'],
  ['exception_approved_at', 'timestamptz'],
  ['exception_expiry', 'text'],
  ['exception_source', 'text'],
  ['exception_claimed_approver', 'text'],
  ['exception_at', 'timestamptz'],
  ['disposition', 'text'],
  ['disposition_reason', 'text'],
  ['disposition_by', 'text'],
  ['disposition_at', 'timestamptz'],
  ['disposition_source', 'text'],
  ['first_seen', 'text'],
  ['first_seen_at', 'timestamptz'],
  ['last_seen', 'text'],
  ['last_seen_at', 'timestamptz'],
  ['last_observed_at', 'timestamptz'],
  ['seen_in', 'text'],
  ['seen_count', 'integer'],
  ['resolved_at', 'timestamptz'],
  ['resolved_in', 'text'],
  ['reopened_at', 'timestamptz'],
  ['not_checked_in', 'text'],
  ['due_date', 'text'],
  ['claims', 'jsonb'],
  ['updated_at', 'timestamptz'],
];
/** text[] columns, each row's list sent as its own literal (db/bulk.ts, textListCell). */
const ARRAYS = new Set(['cve_ids', 'seen_in']);
const names = COLUMNS.map(([c]) => c).join(', ');
const selected = COLUMNS.map(([c, t]) =>
  ARRAYS.has(c) ? `x.${c}::text[]` : t === 'jsonb' ? `x.${c}::jsonb` : `x.${c}`,
).join(', ');
const updates = COLUMNS.filter(([c]) => !['client_id', 'target', 'fingerprint'].includes(c))
  .map(([c]) => `${c} = EXCLUDED.${c}`)
  .join(', ');

/** Rows per statement: one array per column, a statement a few MB at most; as small as the index's chunks and for the same reason (sessions/findings-index-queries.ts). */
export const WRITE_CHUNK = 1000;

/** How unnest's array carries each column's value: a text list as its own literal (db/bulk.ts), jsonb as JSON text. */
const CELLS = COLUMNS.map(([c, t]): readonly [string, string, (v: unknown) => unknown] => [
  c,
  t === 'jsonb' ? 'text' : t,
  ARRAYS.has(c)
    ? (v) => textListCell(v as string[] | null)
    : t === 'jsonb'
      ? (v) => (v == null ? null : JSON.stringify(v))
      : (v) => v,
]);

/**
 * Inserts or replaces records: one statement per chunk, one array parameter per column
 * (unnest), so PostgreSQL parses neither SQL nor JSON per row. Each statement is built when
 * drawn (db/bulk.ts, pipelined).
 */
export function* recordStatements(rows: readonly RecordRow[]): Generator<RawBuilder<unknown>> {
  for (const chunk of chunksOf(rows as readonly Record<string, unknown>[], WRITE_CHUNK)) {
    const arrays = sql.join(
      CELLS.map(([c, type, cell]) =>
        arrayParam(
          chunk.map((r) => cell(r[c])),
          type,
        ),
      ),
    );
    yield sql`
      INSERT INTO finding_records (${sql.raw(names)})
      SELECT ${sql.raw(selected)} FROM unnest(${arrays}) AS x(${sql.raw(names)})
      ON CONFLICT (client_id, target, fingerprint) DO UPDATE SET ${sql.raw(updates)}
    `;
  }
}

export const writeRecords = (db: Kysely<Database>, rows: readonly RecordRow[]): Promise<void> =>
  pipelined(db, recordStatements(rows));

const HISTORY_COLUMNS = [
  ['fingerprint', 'text'],
  ['at', 'timestamptz'],
  ['actor', 'text'],
  ['source', 'text'],
  ['session_id', 'text'],
  ['field', 'text'],
  ['from_value', 'text'],
  ['to_value', 'text'],
  ['detail', 'text'],
] as const satisfies readonly (readonly [keyof HistoryLine, string])[];
const historyNames = HISTORY_COLUMNS.map(([c]) => c).join(', ');

/** Appends history lines in order, a chunk per statement (one array per column). */
export function* historyStatements(t: TargetRef, lines: readonly HistoryLine[]): Generator<RawBuilder<unknown>> {
  for (const chunk of chunksOf(lines, WRITE_CHUNK))
    yield sql`
      INSERT INTO finding_history (client_id, target, ${sql.raw(historyNames)})
      SELECT ${t.clientId}, ${t.target}, ${sql.raw(historyNames)}
      FROM unnest(${sql.join(
        HISTORY_COLUMNS.map(([c, type]) =>
          arrayParam(
            chunk.map((l) => l[c]),
            type,
          ),
        ),
      )}) WITH ORDINALITY AS x(${sql.raw(historyNames)}, n)
      ORDER BY x.n
    `;
}

export const insertHistory = (db: Kysely<Database>, t: TargetRef, lines: readonly HistoryLine[]): Promise<void> =>
  pipelined(db, historyStatements(t, lines));

/** A record's history, oldest first (at most `limit` lines, the newest kept). */
export async function historyOf(
  db: Kysely<Database>,
  t: TargetRef,
  fingerprint: string,
  limit: number,
): Promise<Selectable<FindingHistoryTable>[]> {
  const rows = await db
    .selectFrom('finding_history')
    .selectAll()
    .where('client_id', '=', t.clientId)
    .where('target', '=', t.target)
    .where('fingerprint', '=', fingerprint)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.reverse();
}

export async function dueDaysRow(db: Kysely<Database>, clientId: string): Promise<unknown | undefined> {
  const row = await db
    .selectFrom('remediation_settings')
    .select('due_days')
    .where('client_id', '=', clientId)
    .executeTakeFirst();
  return row?.due_days;
}

export async function saveDueDays(
  db: Kysely<Database>,
  c: { clientId: string; dueDays: unknown; by: string; now: Date },
): Promise<void> {
  const values = { due_days: JSON.stringify(c.dueDays), updated_by: c.by, updated_at: c.now };
  await db
    .insertInto('remediation_settings')
    .values({ client_id: c.clientId, ...values })
    .onConflict((oc) => oc.column('client_id').doUpdateSet(values))
    .execute();
}

/** Every record of a client: what a change of its due days recomputes. */
export function recordsOfClient(db: Kysely<Database>, clientId: string) {
  return db.selectFrom('finding_records').selectAll().where('client_id', '=', clientId).execute();
}

/** Removes the records (and their history) of a target, or of every target of the client. */
export async function deleteTargets(
  db: Kysely<Database>,
  clientId: string,
  target: string | undefined,
): Promise<number> {
  let q = db.deleteFrom('finding_records').where('client_id', '=', clientId);
  if (target !== undefined) q = q.where('target', '=', target);
  const removed = await q.executeTakeFirst();
  let t = db.deleteFrom('finding_targets').where('client_id', '=', clientId);
  if (target !== undefined) t = t.where('target', '=', target);
  await t.execute();
  return Number(removed.numDeletedRows);
}

/**
 * Resolved records not seen since `before` and without a decision in effect (an exception, a
 * false positive): what SVC_RECORD_RETENTION_DAYS removes. Up to `limit` at a time.
 */
export async function deleteStaleResolved(db: Kysely<Database>, before: Date, limit: number): Promise<number> {
  const removed = await sql`
    DELETE FROM finding_records WHERE id IN (
      SELECT id FROM finding_records
      WHERE status = 'resolved' AND last_seen_at < ${before} AND exception_reason IS NULL AND disposition IS NULL
      LIMIT ${limit})
  `.execute(db);
  return Number(removed.numAffectedRows ?? 0);
}

/**
 * A stored session indexed after its findings had records (the migration's older sessions):
 * it joins the sessions each of its findings was seen in, once.
 */
export async function addSightings(
  db: Kysely<Database>,
  t: TargetRef,
  sessionId: string,
  fingerprints: readonly string[],
): Promise<void> {
  if (fingerprints.length === 0) return;
  await sql`
    UPDATE finding_records SET
      seen_in = (SELECT array_agg(x ORDER BY x DESC) FROM
        (SELECT x FROM unnest(seen_in || ARRAY[${sessionId}::text]) AS x ORDER BY x DESC LIMIT ${SEEN_IN_KEPT}) AS kept),
      seen_count = seen_count + 1
    WHERE client_id = ${t.clientId} AND target = ${t.target}
      AND fingerprint = ANY(${sql.val([...fingerprints])}::text[]) AND NOT (${sessionId} = ANY(seen_in))
  `.execute(db);
}
