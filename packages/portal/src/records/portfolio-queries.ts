import type { HostMatch, Severity } from '@svc/protocol';
import { type Kysely, type RawBuilder, sql, type SqlBool } from 'kysely';
import type { Database } from '../db/schema.ts';
import { type RecordRow, severityKeyOf } from './model.ts';

/**
 * The SQL of the findings of record across a caller's scope (GET /api/findings, its summary
 * and a bulk change's selection by filter). The default order, most severe first then the
 * longest known, is kept by the indexes of migration 0017, the others by those of 0022, so a
 * page is an index range scan whatever the number of records.
 */

export interface RecordSelection {
  /** null: every client. */
  clientIds: readonly string[] | null;
  target?: string | undefined;
  severities?: Severity[] | undefined;
  statuses?: string[] | undefined;
  /** Every status but resolved. */
  open?: boolean | undefined;
  kev?: boolean | undefined;
  exceptions?: ('accepted' | 'expired' | 'none')[] | undefined;
  dispositions?: ('false_positive' | 'none')[] | undefined;
  firstSeenFrom?: Date | undefined;
  firstSeenTo?: Date | undefined;
  overdue?: boolean | undefined;
  /** EPSS at least this; records without EPSS are left out. */
  epssMin?: number | undefined;
  /** YYYY-MM-DD: due on or before it; records without a due date are left out. */
  dueBefore?: string | undefined;
  /** protocol host-match.ts: a whole address exactly, anything else as the start of the host. */
  host?: HostMatch | undefined;
  hostPrefix?: string | undefined;
  /** YYYY-MM-DD: an exception past this day is expired, a due date before it overdue. */
  today: string;
}

const holds = (today: string) =>
  sql<SqlBool>`(exception_reason IS NOT NULL AND (exception_expiry IS NULL OR exception_expiry >= ${today}))`;
// The partial indexes of open records name is_open (status <> 'resolved', migration 0042): a query says it to use them.
const overdue = (today: string) =>
  sql<SqlBool>`(is_open AND disposition IS NULL AND NOT ${holds(today)} AND due_date IS NOT NULL AND due_date < ${today})`;
/** The host in byte order, as the host order's index holds it: its filters are a range of that index (migration 0039). */
const HOST_BYTES = sql`host COLLATE "C"`;
const prefix = (text: string) => `${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

function where(s: RecordSelection): RawBuilder<SqlBool> {
  const all: RawBuilder<unknown>[] = [sql`TRUE`];
  // One client as an equality: PostgreSQL reads a one-element ANY() as a filter, not in the client index's order.
  if (s.clientIds?.length === 1) all.push(sql`client_id = ${s.clientIds[0]}`);
  else if (s.clientIds !== null) all.push(sql`client_id = ANY(${sql.val([...s.clientIds])}::text[])`);
  if (s.target !== undefined) all.push(sql`target = ${s.target}`);
  if (s.severities !== undefined)
    all.push(sql`severity_key = ANY(${sql.val(s.severities.map(severityKeyOf))}::smallint[])`);
  const statuses: RawBuilder<unknown>[] = [];
  if (s.statuses !== undefined && s.statuses.length > 0)
    statuses.push(sql`status = ANY(${sql.val(s.statuses)}::text[])`);
  if (s.open === true) statuses.push(sql`status <> 'resolved'`);
  if (statuses.length > 0) all.push(sql`(${sql.join(statuses, sql` OR `)})`);
  if (s.kev !== undefined) all.push(sql`kev = ${s.kev}`);
  if (s.exceptions !== undefined) {
    const either: RawBuilder<unknown>[] = [];
    if (s.exceptions.includes('accepted')) either.push(holds(s.today));
    if (s.exceptions.includes('expired')) either.push(sql`(exception_reason IS NOT NULL AND NOT ${holds(s.today)})`);
    if (s.exceptions.includes('none')) either.push(sql`exception_reason IS NULL`);
    all.push(sql`(${sql.join(either, sql` OR `)})`);
  }
  if (s.dispositions !== undefined) {
    const either: RawBuilder<unknown>[] = [];
    if (s.dispositions.includes('false_positive')) either.push(sql`disposition = 'false_positive'`);
    if (s.dispositions.includes('none')) either.push(sql`disposition IS NULL`);
    all.push(sql`(${sql.join(either, sql` OR `)})`);
  }
  if (s.firstSeenFrom !== undefined) all.push(sql`first_seen_at >= ${s.firstSeenFrom}`);
  if (s.firstSeenTo !== undefined) all.push(sql`first_seen_at < ${s.firstSeenTo}`);
  if (s.overdue !== undefined) all.push(s.overdue ? overdue(s.today) : sql`NOT ${overdue(s.today)}`);
  if (s.epssMin !== undefined) all.push(sql`epss >= ${s.epssMin}`);
  if (s.dueBefore !== undefined) all.push(sql`due_date <= ${s.dueBefore}`);
  if (s.host?.kind === 'address') all.push(sql`${HOST_BYTES} = ${s.host.value}`);
  else if (s.host !== undefined) all.push(sql`${HOST_BYTES} LIKE ${prefix(s.host.value)}`);
  if (s.hostPrefix !== undefined) all.push(sql`${HOST_BYTES} LIKE ${prefix(s.hostPrefix)}`);
  return sql<SqlBool>`${sql.join(all, sql` AND `)}`;
}

/** A page position in the severity order: the last row's severity key, first-seen time and id. */
export type SeverityCursor = [number, string, string];
/** A page position in a one-key order: the last row's key (null: it has none) and id. */
export type KeyCursor = [string | number | null, string];

/**
 * The one-key orders (protocol RECORD_SORTS but severity): the key, then the id in the same
 * direction, records without the key last. Each has an index of migration 0022 across every
 * client, so a page is an index range scan; within a few clients PostgreSQL sorts their rows.
 */
const KEY_ORDERS = {
  first_seen_desc: { column: sql.ref('first_seen_at'), type: sql`timestamptz`, desc: true, nullable: false },
  first_seen_asc: { column: sql.ref('first_seen_at'), type: sql`timestamptz`, desc: false, nullable: false },
  due_date_asc: { column: sql.ref('due_date'), type: sql`text`, desc: false, nullable: true },
  epss_desc: { column: sql.ref('epss'), type: sql`double precision`, desc: true, nullable: true },
  // Byte order: the same on every database whatever its locale (which may ignore dots and dashes).
  host_asc: { column: HOST_BYTES, type: sql`text`, desc: false, nullable: true },
} as const;
export type KeySort = keyof typeof KEY_ORDERS;

/** The key a row's cursor holds in a one-key order. */
export function keyOfRow(sort: KeySort, r: RecordRow): string | number | null {
  switch (sort) {
    case 'first_seen_desc':
    case 'first_seen_asc':
      return r.first_seen_at.toISOString();
    case 'due_date_asc':
      return r.due_date;
    case 'epss_desc':
      return r.epss;
    case 'host_asc':
      return r.host;
  }
}

type Row = RecordRow & { id: string };

/**
 * A page in the severity order. After a cursor the position is two index ranges (the rest of
 * the cursor's severity, then the less severe ones) joined by UNION ALL: as one OR it would be a
 * filter, and page n would read n pages of rows (bench/README.md, "Portfolio").
 */
async function severityPage(
  db: Kysely<Database>,
  filters: RawBuilder<SqlBool>,
  after: SeverityCursor | undefined,
  limit: number,
) {
  const order = sql`ORDER BY severity_key DESC, first_seen_at, id`;
  const query =
    after === undefined
      ? sql<Row>`SELECT * FROM finding_records WHERE ${filters} ${order} LIMIT ${limit}`
      : sql<Row>`
    SELECT * FROM (
      (SELECT * FROM finding_records WHERE ${filters} AND severity_key = ${after[0]}
         AND (first_seen_at, id) > (${after[1]}::timestamptz, ${after[2]}::bigint) ${order} LIMIT ${limit})
      UNION ALL
      (SELECT * FROM finding_records WHERE ${filters} AND severity_key < ${after[0]} ${order} LIMIT ${limit})
    ) AS page ${order} LIMIT ${limit}`;
  return (await query.execute(db)).rows;
}

/**
 * A page in a one-key order. After a row with the key: the rest of the keyed rows as one row
 * comparison (an index range), then (for a nullable key) the rows without it, joined by UNION
 * ALL as in the severity order; after a row without the key, only the rest of those.
 */
async function keyPage(
  db: Kysely<Database>,
  filters: RawBuilder<SqlBool>,
  sort: KeySort,
  after: KeyCursor | undefined,
  limit: number,
) {
  const k = KEY_ORDERS[sort];
  const dir = k.desc ? sql`DESC` : sql`ASC`;
  // NULLS LAST only where there can be nulls: a backward scan of (first_seen_at, id) gives
  // DESC NULLS FIRST, and naming NULLS LAST there made PostgreSQL sort the whole table.
  const order = k.nullable
    ? sql`ORDER BY ${k.column} ${dir} NULLS LAST, id ${dir}`
    : sql`ORDER BY ${k.column} ${dir}, id ${dir}`;
  const beyond = k.desc ? sql`<` : sql`>`;
  const page = (extra: RawBuilder<unknown>) =>
    sql<Row>`(SELECT * FROM finding_records WHERE ${filters} AND ${extra} ${order} LIMIT ${limit})`;
  let query: RawBuilder<Row>;
  if (after === undefined) query = sql<Row>`SELECT * FROM finding_records WHERE ${filters} ${order} LIMIT ${limit}`;
  else if (after[0] === null) query = page(sql`${k.column} IS NULL AND id ${beyond} ${after[1]}::bigint`);
  else {
    const keyed = page(sql`(${k.column}, id) ${beyond} (${after[0]}::${k.type}, ${after[1]}::bigint)`);
    query = k.nullable
      ? sql<Row>`SELECT * FROM (${keyed} UNION ALL ${page(sql`${k.column} IS NULL`)}) AS page ${order} LIMIT ${limit}`
      : keyed;
  }
  return (await query.execute(db)).rows;
}

export type RecordPosition =
  | { sort: 'severity'; after: SeverityCursor | undefined }
  | { sort: KeySort; after: KeyCursor | undefined };

/** A page of what a selection matches, in the order and after the position asked. */
export function recordPage(
  db: Kysely<Database>,
  s: RecordSelection,
  at: RecordPosition,
  limit: number,
): Promise<Row[]> {
  return at.sort === 'severity'
    ? severityPage(db, where(s), at.after, limit)
    : keyPage(db, where(s), at.sort, at.after, limit);
}

export async function recordSummary(db: Kysely<Database>, s: RecordSelection) {
  const { rows } = await sql<Record<string, string>>`
    SELECT count(*) AS total,
      count(*) FILTER (WHERE status <> 'resolved') AS open,
      count(*) FILTER (WHERE ${overdue(s.today)}) AS overdue,
      count(*) FILTER (WHERE severity = 'critical') AS critical,
      count(*) FILTER (WHERE severity = 'high') AS high,
      count(*) FILTER (WHERE severity = 'medium') AS medium,
      count(*) FILTER (WHERE severity = 'low') AS low,
      count(*) FILTER (WHERE severity = 'info') AS info,
      count(*) FILTER (WHERE status = 'new') AS s_new,
      count(*) FILTER (WHERE status = 'persistent') AS s_persistent,
      count(*) FILTER (WHERE status = 'in_progress') AS s_in_progress,
      count(*) FILTER (WHERE status = 'resolved') AS s_resolved,
      count(*) FILTER (WHERE status = 'deferred') AS s_deferred,
      count(*) FILTER (WHERE status <> 'resolved' AND ${holds(s.today)}) AS accepted,
      count(*) FILTER (WHERE status <> 'resolved' AND exception_reason IS NOT NULL AND NOT ${holds(s.today)}) AS expired,
      count(*) FILTER (WHERE status <> 'resolved' AND disposition = 'false_positive') AS false_positive
    FROM finding_records WHERE ${where(s)}
  `.execute(db);
  const r = rows[0] ?? {};
  return Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Number(v)])) as Record<string, number>;
}

/**
 * How many records a selection matches, reading at most `upto` + 1 of them: without a filter
 * that narrows it, the summary's full count reads every record (1.1–1.6 s at 1,000,000).
 */
export async function recordCount(db: Kysely<Database>, s: RecordSelection, upto: number): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    SELECT count(*) AS n FROM (SELECT 1 FROM finding_records WHERE ${where(s)} LIMIT ${upto + 1}) AS matched
  `.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/** The (client, target, fingerprint) of every record a selection reaches, at most `limit` + 1 (to tell the caller it was more). */
export async function selectedKeys(
  db: Kysely<Database>,
  s: RecordSelection,
  limit: number,
): Promise<{ client_id: string; target: string; fingerprint: string }[]> {
  const { rows } = await sql<{ client_id: string; target: string; fingerprint: string }>`
    SELECT client_id, target, fingerprint FROM finding_records WHERE ${where(s)}
    ORDER BY client_id, target, fingerprint LIMIT ${limit + 1}
  `.execute(db);
  return rows;
}

/** Which of these fingerprints exist under the client (in one target, or any), with their targets. */
export async function keysOfFingerprints(
  db: Kysely<Database>,
  clientId: string,
  target: string | undefined,
  fingerprints: readonly string[],
): Promise<{ client_id: string; target: string; fingerprint: string }[]> {
  let q = db
    .selectFrom('finding_records')
    .select(['client_id', 'target', 'fingerprint'])
    .where('client_id', '=', clientId)
    .where('fingerprint', '=', sql<string>`ANY(${sql.val([...fingerprints])}::text[])`);
  if (target !== undefined) q = q.where('target', '=', target);
  return q.execute();
}

/**
 * Per target of the scope (every target with records), its newest scan and how many findings
 * each overview count holds (protocol POSTURE_FILTERS: open, no false positive, no exception in
 * effect; overdue as the `overdue` filter). The open records without an exception and those
 * whose exception has expired are read apart: each part is an index-only scan of migration
 * 0021's partial indexes (as one NOT (…) filter it is a scan of the whole table).
 */
export async function postureCounts(db: Kysely<Database>, clientIds: readonly string[] | null, today: string) {
  const scope = (alias: string) =>
    clientIds === null ? sql`TRUE` : sql`${sql.ref(`${alias}.client_id`)} = ANY(${sql.val([...clientIds])}::text[])`;
  const { rows } = await sql<{
    client_id: string;
    target: string;
    last_session_id: string | null;
    last_scanned_at: Date | null;
    critical: string | null;
    high: string | null;
    overdue: string | null;
    kev: string | null;
  }>`
    SELECT t.client_id, t.target, t.last_session_id, t.last_scanned_at, c.critical, c.high, c.overdue, c.kev
    FROM finding_targets t LEFT JOIN (
      SELECT r.client_id, r.target,
        count(*) FILTER (WHERE severity_key = ${severityKeyOf('critical')}) AS critical,
        count(*) FILTER (WHERE severity_key = ${severityKeyOf('high')}) AS high,
        count(*) FILTER (WHERE due_date IS NOT NULL AND due_date < ${today}) AS overdue,
        count(*) FILTER (WHERE kev) AS kev
      FROM (
        SELECT client_id, target, severity_key, due_date, kev FROM finding_records r
        WHERE ${scope('r')} AND is_open AND disposition IS NULL AND exception_reason IS NULL
        UNION ALL
        SELECT client_id, target, severity_key, due_date, kev FROM finding_records r
        WHERE ${scope('r')} AND is_open AND disposition IS NULL AND exception_reason IS NOT NULL
          AND exception_expiry IS NOT NULL AND exception_expiry < ${today}
      ) r
      GROUP BY r.client_id, r.target
    ) c ON c.client_id = t.client_id AND c.target = t.target
    WHERE ${scope('t')}
  `.execute(db);
  const n = (v: string | null) => (v === null ? 0 : Number(v));
  return rows.map((r) => ({
    client_id: r.client_id,
    target: r.target,
    last_session_id: r.last_session_id,
    last_scanned_at: r.last_scanned_at,
    critical: n(r.critical),
    high: n(r.high),
    overdue: n(r.overdue),
    kev: n(r.kev),
  }));
}
