import type {
  DISPOSITION_FILTERS,
  ExceptionFilter,
  FindingChange,
  FindingSort,
  FindingStatusFilter,
  HostMatch,
  Severity,
} from '@svc/protocol';
import { type Kysely, type RawBuilder, type Selectable, sql, type SqlBool } from 'kysely';
import type { Database, FindingRecordsTable, SessionFindingsTable } from '../db/schema.ts';
import { DETAIL_PAGE } from './detail-pages.ts';
import { severityKey } from './findings-index.ts';
import type { SessionRef } from './queries.ts';

/**
 * The SQL of a session's findings index, read with the findings of record of its target: the
 * rows say what the session found (and which records it resolved or did not check), the records
 * what people decided on each (docs/findings-of-record.md). A row without a record (no key could
 * be made for its finding, or its target had no records when it was indexed) shows what its
 * file's entry said.
 */

/** The record columns a findings page shows, prefixed `r_`. */
const RECORD_COLUMNS = [
  'status',
  'prior_status',
  'status_changed',
  'status_source',
  'note',
  'first_seen',
  'exception_reason',
  'exception_approver',
  'exception_approved_at',
  'exception_expiry',
  'exception_source',
  'exception_claimed_approver',
  'disposition',
  'disposition_reason',
  'disposition_by',
  'disposition_at',
  'last_seen',
  'resolved_at',
  'reopened_at',
  'due_date',
  'fingerprint',
] as const satisfies readonly (keyof FindingRecordsTable)[];
type RecordPart = { [K in (typeof RECORD_COLUMNS)[number] as `r_${K}`]: Selectable<FindingRecordsTable>[K] | null };

export type FindingRecord = Selectable<SessionFindingsTable> & RecordPart & { sort_key: string | number };
export type FindingWithDetail = FindingRecord & { detail: unknown };

/** The stored file (blob key) the session's index was built from and its number of findings; undefined when it has none. */
export function indexState(
  db: Kysely<Database>,
  ref: SessionRef,
): Promise<{ file_key: string; total: number } | undefined> {
  return db
    .selectFrom('session_findings_state')
    .select(['file_key', 'total'])
    .where('client_id', '=', ref.clientId)
    .where('session_id', '=', ref.sessionId)
    .executeTakeFirst();
}

export interface FindingsFilter {
  severities?: Severity[] | undefined;
  statuses?: FindingStatusFilter[] | undefined;
  exceptions?: ExceptionFilter[] | undefined;
  changes?: FindingChange[] | undefined;
  dispositions?: (typeof DISPOSITION_FILTERS)[number][] | undefined;
  overdue?: boolean | undefined;
  /** Known exploited (true) or not (false). */
  kev?: boolean | undefined;
  /** protocol host-match.ts */
  host?: HostMatch | undefined;
  port?: number | undefined;
  /** Upper-case CVE id. */
  cve?: string | undefined;
  q?: string | undefined;
  /** YYYY-MM-DD (UTC): an exception whose expiry is before this day is expired; a due date before it is overdue. */
  today: string;
}

// What a row states, whether it comes from its record or (without one) from its file's entry.
const HAS_RECORD = sql`(r.fingerprint IS NOT NULL)`;
/** A record the session resolved stays resolved in this session's view, whatever became of it since. */
const STATUS = sql<
  string | null
>`CASE WHEN NOT sf.in_scan AND sf.change = 'resolved' THEN 'resolved' WHEN ${HAS_RECORD} THEN r.status ELSE sf.status END`;
const STATUS_KEY = sql<number>`CASE ${STATUS} WHEN 'new' THEN 0 WHEN 'persistent' THEN 1 WHEN 'in_progress' THEN 2 WHEN 'resolved' THEN 3 WHEN 'deferred' THEN 4 ELSE 5 END`;
const FIRST_SEEN_KEY = sql<string>`COALESCE(r.first_seen, sf.first_seen_key)`;
const HAS_EXCEPTION = sql<SqlBool>`(CASE WHEN ${HAS_RECORD} THEN r.exception_reason IS NOT NULL ELSE sf.exception_status IS NOT NULL END AND ${STATUS} <> 'resolved')`;
const exceptionHolds = (today: string) =>
  sql<SqlBool>`(${HAS_EXCEPTION} AND CASE WHEN ${HAS_RECORD} THEN (r.exception_expiry IS NULL OR r.exception_expiry >= ${today})
    ELSE (sf.exception_status = 'accepted' AND NOT sf.exception_expired AND (sf.exception_expiry IS NULL OR sf.exception_expiry >= ${today})) END)`;
const overdue = (today: string) =>
  sql<SqlBool>`(${HAS_RECORD} AND ${STATUS} <> 'resolved' AND r.disposition IS NULL AND NOT ${exceptionHolds(today)}
    AND r.due_date IS NOT NULL AND r.due_date < ${today})`;

/** The sort key of each sort: a column of the index, or what the record states. */
const SORT_KEYS: Record<FindingSort, RawBuilder<unknown>> = {
  severity: sql`sf.severity_key`,
  host: sql`sf.host_key`,
  port: sql`sf.port_key`,
  cve: sql`sf.cve_key`,
  cvss: sql`sf.cvss_key`,
  status: STATUS_KEY,
  first_seen: FIRST_SEEN_KEY,
};

/** `%`, `_` and `\` stand for themselves in a LIKE pattern. */
const contains = (text: string) => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
const startsWith = (text: string) => `${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The host filter's rule (protocol host-match.ts): a whole address exactly, anything else as the start of a name or address. */
function hostCondition(m: HostMatch): RawBuilder<unknown> {
  if (m.kind === 'address') return sql`lower(sf.host) = ${m.value}`;
  const p = startsWith(m.value);
  return sql`(lower(sf.host) LIKE ${p} OR lower(sf.hostname) LIKE ${p})`;
}

function conditions(ref: SessionRef, f: FindingsFilter): RawBuilder<SqlBool> {
  const all: RawBuilder<unknown>[] = [sql`sf.client_id = ${ref.clientId}`, sql`sf.session_id = ${ref.sessionId}`];
  if (f.severities !== undefined)
    all.push(sql`sf.severity_key = ANY(${sql.val(f.severities.map(severityKey))}::int[])`);
  if (f.kev !== undefined) all.push(sql`sf.kev = ${f.kev}`);
  if (f.statuses !== undefined) {
    const named = f.statuses.filter((s) => s !== 'untracked');
    const either: RawBuilder<unknown>[] = [];
    if (named.length > 0) either.push(sql`${STATUS} = ANY(${sql.val(named)}::text[])`);
    if (f.statuses.includes('untracked')) either.push(sql`${STATUS} IS NULL`);
    all.push(sql`(${sql.join(either, sql` OR `)})`);
  }
  if (f.exceptions !== undefined) {
    const either: RawBuilder<unknown>[] = [];
    if (f.exceptions.includes('active')) either.push(exceptionHolds(f.today));
    if (f.exceptions.includes('expired')) either.push(sql`(${HAS_EXCEPTION} AND NOT ${exceptionHolds(f.today)})`);
    if (f.exceptions.includes('none')) either.push(sql`NOT ${HAS_EXCEPTION}`);
    all.push(sql`(${sql.join(either, sql` OR `)})`);
  }
  if (f.changes !== undefined) all.push(sql`sf.change = ANY(${sql.val(f.changes)}::text[])`);
  if (f.dispositions !== undefined) {
    const either: RawBuilder<unknown>[] = [];
    if (f.dispositions.includes('false_positive')) either.push(sql`r.disposition = 'false_positive'`);
    if (f.dispositions.includes('none')) either.push(sql`r.disposition IS NULL`);
    all.push(sql`(${sql.join(either, sql` OR `)})`);
  }
  if (f.overdue !== undefined) all.push(f.overdue ? overdue(f.today) : sql`NOT ${overdue(f.today)}`);
  if (f.host !== undefined) all.push(hostCondition(f.host));
  if (f.port !== undefined) all.push(sql`sf.port_key = ${f.port}`);
  if (f.cve !== undefined) all.push(sql`${f.cve} = ANY(sf.cve_ids)`);
  if (f.q !== undefined) all.push(sql`sf.search LIKE ${contains(f.q)}`);
  return sql<SqlBool>`${sql.join(all, sql` AND `)}`;
}

const RECORD_SELECT = sql.raw(RECORD_COLUMNS.map((c) => `r.${c} AS r_${c}`).join(', '));
/**
 * A session's rows, each with its record looked up by its whole key: a lateral lookup the planner
 * cannot flatten (LIMIT), since with the statistics of freshly written tables it would otherwise
 * scan the target's records once per row.
 */
const joined = (target: string) =>
  sql`session_findings sf LEFT JOIN LATERAL (
    SELECT * FROM finding_records fr
    WHERE fr.client_id = sf.client_id AND fr.target = ${target} AND fr.fingerprint = sf.fingerprint
    LIMIT 1
  ) r ON TRUE`;

export interface PageRequest {
  sort: FindingSort;
  order: 'asc' | 'desc';
  /** Keyset position: rows strictly after (sort key, ordinal) in the page's order. */
  after: [string | number, number] | undefined;
  limit: number;
}

export async function findingsPage(
  db: Kysely<Database>,
  ref: SessionRef,
  target: string,
  filter: FindingsFilter,
  page: PageRequest,
): Promise<FindingRecord[]> {
  const key = SORT_KEYS[page.sort];
  const dir = sql.raw(page.order === 'asc' ? 'ASC' : 'DESC');
  const cmp = sql.raw(page.order === 'asc' ? '>' : '<');
  const after =
    page.after === undefined ? sql`TRUE` : sql`(${key}, sf.ordinal) ${cmp} (${page.after[0]}, ${page.after[1]})`;
  const { rows } = await sql<FindingRecord>`
    SELECT sf.*, ${RECORD_SELECT}, ${key} AS sort_key
    FROM ${joined(target)}
    WHERE ${conditions(ref, filter)} AND ${after}
    ORDER BY ${key} ${dir}, sf.ordinal ${dir}
    LIMIT ${page.limit + 1}
  `.execute(db);
  return rows;
}

export async function findingsCount(
  db: Kysely<Database>,
  ref: SessionRef,
  target: string,
  filter: FindingsFilter,
): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    SELECT count(*) AS n FROM ${joined(target)} WHERE ${conditions(ref, filter)}
  `.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/**
 * What the session did to the findings of record (over every row), and how many of its findings
 * are overdue: from its state row and due counts (migration 0043) when they count its stored
 * file, else from the record of each of its rows (600 ms at 100,000 findings).
 */
export async function changeCounts(
  db: Kysely<Database>,
  ref: SessionRef,
  target: string,
  today: string,
): Promise<{ changes: Map<string, number>; overdue: number }> {
  const { rows } = await sql<{ changes: Record<string, number> | null; overdue: string | null }>`
    SELECT s.change_counts AS changes,
      (SELECT sum(d.n) FROM session_due_counts d
       WHERE d.client_id = s.client_id AND d.session_id = s.session_id AND d.due_date < ${today}
         AND NOT (d.exception_expiry <> '' AND (d.exception_expiry = 'never' OR d.exception_expiry >= ${today}))) AS overdue
    FROM session_findings_state s
    WHERE s.client_id = ${ref.clientId} AND s.session_id = ${ref.sessionId} AND s.due_counted_key = s.file_key
  `.execute(db);
  const counted = rows[0];
  if (counted?.changes == null) return countedByRecords(db, ref, target, today);
  return { changes: new Map(Object.entries(counted.changes)), overdue: Number(counted.overdue ?? 0) };
}

async function countedByRecords(
  db: Kysely<Database>,
  ref: SessionRef,
  target: string,
  today: string,
): Promise<{ changes: Map<string, number>; overdue: number }> {
  const { rows } = await sql<{ change: string | null; n: string; overdue: string }>`
    SELECT sf.change, count(*) AS n, count(*) FILTER (WHERE sf.in_scan AND ${overdue(today)}) AS overdue
    FROM ${joined(target)}
    WHERE sf.client_id = ${ref.clientId} AND sf.session_id = ${ref.sessionId}
    GROUP BY sf.change
  `.execute(db);
  return {
    changes: new Map(rows.filter((r) => r.change !== null).map((r) => [r.change as string, Number(r.n)])),
    overdue: rows.reduce((a, r) => a + Number(r.overdue), 0),
  };
}

export async function findingAt(
  db: Kysely<Database>,
  ref: SessionRef,
  target: string,
  ordinal: number,
): Promise<FindingWithDetail | undefined> {
  const { rows } = await sql<FindingWithDetail>`
    SELECT sf.*, ${RECORD_SELECT}, 0 AS sort_key, COALESCE(p.details::json -> sf.ordinal::text, d.detail::json) AS detail
    FROM ${joined(target)}
    LEFT JOIN session_finding_detail_pages p
      ON p.client_id = sf.client_id AND p.session_id = sf.session_id AND p.page = sf.ordinal / ${DETAIL_PAGE}
    -- Indexed by a replica of the version before migration 0040 during a rolling upgrade.
    LEFT JOIN session_finding_details d
      ON d.client_id = sf.client_id AND d.session_id = sf.session_id AND d.ordinal = sf.ordinal
    WHERE sf.client_id = ${ref.clientId} AND sf.session_id = ${ref.sessionId} AND sf.ordinal = ${ordinal}
  `.execute(db);
  return rows[0];
}

/** Every row of a session with its record, in file order (what a served file is built from). */
export async function allFindings(db: Kysely<Database>, ref: SessionRef, target: string): Promise<FindingRecord[]> {
  const { rows } = await sql<FindingRecord>`
    SELECT sf.*, ${RECORD_SELECT}, 0 AS sort_key
    FROM ${joined(target)}
    WHERE sf.client_id = ${ref.clientId} AND sf.session_id = ${ref.sessionId}
    ORDER BY sf.ordinal
  `.execute(db);
  return rows;
}

export function viewBlocksOfSession(
  db: Kysely<Database>,
  ref: SessionRef,
): Promise<{ topology: unknown; orc_964: unknown } | undefined> {
  return db
    .selectFrom('session_findings_state')
    .select(['topology', 'orc_964'])
    .where('client_id', '=', ref.clientId)
    .where('session_id', '=', ref.sessionId)
    .executeTakeFirst();
}

/** The record key, title and place of every row of a session: what a remediation update matches items against. */
export function rowKeysOf(db: Kysely<Database>, ref: SessionRef) {
  return db
    .selectFrom('session_findings')
    .select(['fingerprint', 'title', 'in_scan', 'change'])
    .where('client_id', '=', ref.clientId)
    .where('session_id', '=', ref.sessionId)
    .orderBy('ordinal')
    .execute();
}
