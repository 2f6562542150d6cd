import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Database } from '../db/schema.ts';
import { arrayParam, chunksOf, pipelined, textListCell } from '../db/bulk.ts';
import { type DetailPage, detailPages } from './detail-pages.ts';
import type { IndexRow } from './findings-index.ts';
import type { SessionRef } from './queries.ts';

/**
 * The SQL that writes a session's findings index (findings-index.ts makes its rows): the state
 * row, the rows a chunk per statement and the details a page per row. findings-queries.ts reads it.
 */

/**
 * The index's columns with the array type each is sent as: a chunk of rows goes in one INSERT
 * as one array per column (unnest), so a statement has the same parameters whatever its rows,
 * and PostgreSQL parses and plans it once per chunk. cve_ids (a list per row) travels as one
 * array literal per row (db/bulk.ts, textListCell).
 */
const INDEX_COLUMNS = [
  ['ordinal', 'integer'],
  ['fingerprint', 'text'],
  ['in_scan', 'boolean'],
  ['change', 'text'],
  ['score_severity', 'text'],
  ['title', 'text'],
  ['severity', 'text'],
  ['severity_key', 'smallint'],
  ['cvss', 'real'],
  ['cvss_key', 'smallint'],
  ['cve_ids', 'text'],
  ['cve_key', 'text'],
  ['host', 'text'],
  ['hostname', 'text'],
  ['host_key', 'text'],
  ['port', 'integer'],
  ['port_key', 'integer'],
  ['protocol', 'text'],
  ['status', 'text'],
  ['status_key', 'smallint'],
  ['tracked_by', 'text'],
  ['first_seen', 'text'],
  ['first_seen_key', 'text'],
  ['status_changed', 'text'],
  ['note', 'text'],
  ['exception_status', 'text'],
  ['exception_expired', 'boolean'],
  ['exception_reason', 'text'],
  ['exception_approver', 'text'],
  ['exception_approved_at', 'text'],
  ['exception_expiry', 'text'],
  ['kev', 'boolean'],
  ['kev_date_added', 'text'],
  ['epss', 'double precision'],
  ['epss_percentile', 'double precision'],
  ['search', 'text'],
] as const satisfies readonly (readonly [keyof Omit<IndexRow, 'detail'>, string])[];

const INDEX_NAMES = INDEX_COLUMNS.map(([c]) => c).join(', ');
const INDEX_SELECTED = INDEX_COLUMNS.map(([c]) => (c === 'cve_ids' ? 'x.cve_ids::text[]' : `x.${c}`)).join(', ');

/**
 * Rows per INSERT: bounded so one statement's arrays stay a few MB (a detail is up to a few kB)
 * and a large session does not hold every row's SQL values at once; a thousand, so that
 * PostgreSQL inserts one chunk while the portal builds the next, where 5,000 left each waiting on
 * the other (bench/README.md, "Sessions of many findings").
 */
export const INSERT_CHUNK = 1000;

/** One row per page, each page's text a parameter of its own (no array literal for PostgreSQL to parse). */
function insertPages(ref: SessionRef, pages: readonly DetailPage[]) {
  const rows = pages.map((p) => sql`(${ref.clientId}, ${ref.sessionId}, ${p.page}, ${p.details})`);
  return sql`INSERT INTO session_finding_detail_pages (client_id, session_id, page, details) VALUES ${sql.join(rows)}`;
}

/** The chunk's values, one array per column (unnest's input). */
function columnArrays(rows: readonly IndexRow[]) {
  return sql.join(
    INDEX_COLUMNS.map(([c, type]) =>
      arrayParam(c === 'cve_ids' ? rows.map((r) => textListCell(r.cve_ids)) : rows.map((r) => r[c]), type),
    ),
  );
}

/** What an index is built from, kept in its state row. */
export interface IndexState {
  fileKey: string;
  /** How many rows the index holds. */
  total: number;
  topology: string | null;
  orc_964: string | null;
}

/** Sets a session's index state: what its rows were built from and how many there are. */
export async function setIndexState(db: Kysely<Database>, ref: SessionRef, index: IndexState): Promise<void> {
  const key = { client_id: ref.clientId, session_id: ref.sessionId };
  const state = { file_key: index.fileKey, total: index.total, topology: index.topology, orc_964: index.orc_964 };
  await db
    .insertInto('session_findings_state')
    .values({ ...key, ...state })
    .onConflict((oc) => oc.columns(['client_id', 'session_id']).doUpdateSet({ ...state, indexed_at: sql`now()` }))
    .execute();
}

/** Deletes a session's index rows and detail pages, not its state row. */
export async function deleteIndexRows(db: Kysely<Database>, ref: SessionRef): Promise<void> {
  for (const table of ['session_findings', 'session_finding_detail_pages', 'session_finding_details'] as const)
    await db.deleteFrom(table).where('client_id', '=', ref.clientId).where('session_id', '=', ref.sessionId).execute();
}

/** Empties a session's index and sets its state, before indexStatements fills it (the caller holds the session row's lock). */
export async function resetFindingsIndex(db: Kysely<Database>, ref: SessionRef, index: IndexState): Promise<void> {
  await setIndexState(db, ref, index);
  await deleteIndexRows(db, ref);
}

/** Notes that a session's index rows were written before its upload committed (migration 0041). */
export async function notePendingIndex(db: Kysely<Database>, ref: SessionRef): Promise<void> {
  await db
    .insertInto('session_index_pending')
    .values({ client_id: ref.clientId, session_id: ref.sessionId })
    .onConflict((oc) => oc.columns(['client_id', 'session_id']).doUpdateSet({ written_at: sql`now()` }))
    .execute();
}

export async function clearPendingIndex(db: Kysely<Database>, ref: SessionRef): Promise<void> {
  await db
    .deleteFrom('session_index_pending')
    .where('client_id', '=', ref.clientId)
    .where('session_id', '=', ref.sessionId)
    .execute();
}

/** Pending indexes noted more than `seconds` ago by the database's clock (the replicas' may differ), oldest first. */
export async function pendingIndexesOlderThan(
  db: Kysely<Database>,
  seconds: number,
  limit: number,
): Promise<SessionRef[]> {
  const rows = await db
    .selectFrom('session_index_pending')
    .select(['client_id', 'session_id'])
    .where('written_at', '<', sql<Date>`now() - make_interval(secs => ${seconds})`)
    .orderBy('written_at')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ clientId: r.client_id, sessionId: r.session_id }));
}

/**
 * The statements that write an emptied index: rows then the details' pages per chunk, each
 * built when drawn (db/bulk.ts, pipelined). `rows` may be produced as they are written
 * (indexRowsIn); `total` is how many it yields, and the state row's: a mismatch throws.
 */
export function* indexStatements(
  ref: SessionRef,
  rows: Iterable<IndexRow>,
  total: number,
): Generator<RawBuilder<unknown>> {
  let written = 0;
  const pages = detailPages();
  for (const chunk of chunksOf(rows, INSERT_CHUNK)) {
    written += chunk.length;
    yield sql`
      INSERT INTO session_findings (client_id, session_id, ${sql.raw(INDEX_NAMES)})
      SELECT ${ref.clientId}, ${ref.sessionId}, ${sql.raw(INDEX_SELECTED)}
      FROM unnest(${columnArrays(chunk)}) AS x(${sql.raw(INDEX_NAMES)})
    `;
    const done = pages.add(chunk);
    if (done.length > 0) yield insertPages(ref, done);
  }
  const last = pages.end();
  if (last.length > 0) yield insertPages(ref, last);
  // The state row's total is what the findings endpoint pages by: never let it disagree.
  if (written !== total) throw new Error(`findings index: ${written} rows written, ${total} expected`);
}

/** Replaces a session's whole index (the caller holds the session row's lock). */
export async function replaceFindingsIndex(
  db: Kysely<Database>,
  ref: SessionRef,
  index: IndexState & { rows: Iterable<IndexRow> },
): Promise<void> {
  await resetFindingsIndex(db, ref, index);
  await pipelined(db, indexStatements(ref, index.rows, index.total));
}
