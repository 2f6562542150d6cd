import type { ExceptionFilter, FindingSort, FindingStatusFilter, Severity } from '@svc/protocol';
import { type ExpressionBuilder, type Kysely, type Selectable, sql, type SqlBool, type Expression } from 'kysely';
import type { Database, SessionFindingsTable } from '../db/schema.ts';
import { type IndexRow, type RowChange, severityKey, statusKey } from './findings-index.ts';
import type { SessionRef } from './queries.ts';

export type FindingRecord = Selectable<SessionFindingsTable>;
export type FindingWithDetail = FindingRecord & { detail: unknown };

/** Rows per INSERT: 32 columns each stays far below PostgreSQL's 65,535 parameters. */
const INSERT_CHUNK = 1000;

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

/** Replace a session's whole index (the caller holds the session row's lock). */
export async function replaceFindingsIndex(
  db: Kysely<Database>,
  ref: SessionRef,
  index: { fileKey: string; rows: IndexRow[]; topology: string | null; orc_964: string | null },
): Promise<void> {
  const key = { client_id: ref.clientId, session_id: ref.sessionId };
  const state = { file_key: index.fileKey, total: index.rows.length, topology: index.topology, orc_964: index.orc_964 };
  await db
    .insertInto('session_findings_state')
    .values({ ...key, ...state })
    .onConflict((oc) => oc.columns(['client_id', 'session_id']).doUpdateSet({ ...state, indexed_at: sql`now()` }))
    .execute();
  for (const table of ['session_findings', 'session_finding_details'] as const)
    await db.deleteFrom(table).where('client_id', '=', ref.clientId).where('session_id', '=', ref.sessionId).execute();
  for (let i = 0; i < index.rows.length; i += INSERT_CHUNK) {
    const chunk = index.rows.slice(i, i + INSERT_CHUNK);
    await db
      .insertInto('session_findings')
      .values(chunk.map(({ detail: _, ...r }) => ({ ...key, ...r })))
      .execute();
    await db
      .insertInto('session_finding_details')
      .values(chunk.map((r) => ({ ...key, ordinal: r.ordinal, detail: r.detail })))
      .execute();
  }
}

/** Point the index at a rewritten file and apply the rows a remediation update changed. */
export async function patchFindingsIndex(
  db: Kysely<Database>,
  ref: SessionRef,
  fileKey: string,
  changes: RowChange[],
): Promise<void> {
  await db
    .updateTable('session_findings_state')
    .set({ file_key: fileKey, indexed_at: sql`now()` })
    .where('client_id', '=', ref.clientId)
    .where('session_id', '=', ref.sessionId)
    .execute();
  for (const { ordinal, ...set } of changes)
    await db
      .updateTable('session_findings')
      .set(set)
      .where('client_id', '=', ref.clientId)
      .where('session_id', '=', ref.sessionId)
      .where('ordinal', '=', ordinal)
      .execute();
}

export interface FindingsFilter {
  severities?: Severity[] | undefined;
  statuses?: FindingStatusFilter[] | undefined;
  exceptions?: ExceptionFilter[] | undefined;
  /** Known exploited (true) or not (false). */
  kev?: boolean | undefined;
  host?: string | undefined;
  port?: number | undefined;
  /** Upper-case CVE id. */
  cve?: string | undefined;
  q?: string | undefined;
  /** YYYY-MM-DD (UTC): an exception whose expiry is before this day is expired. */
  today: string;
}

/** The sort key column of each sort. */
export const SORT_COLUMNS = {
  severity: 'severity_key',
  host: 'host_key',
  port: 'port_key',
  cve: 'cve_key',
  cvss: 'cvss_key',
  status: 'status_key',
  first_seen: 'first_seen_key',
} as const satisfies Record<FindingSort, keyof SessionFindingsTable>;
type SortColumn = (typeof SORT_COLUMNS)[FindingSort];

/** `%`, `_` and `\` stand for themselves in a LIKE pattern. */
const contains = (text: string) => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

type Eb = ExpressionBuilder<Database, 'session_findings'>;

function activeException(eb: Eb, today: string): Expression<SqlBool> {
  return eb.and([
    eb('exception_status', '=', 'accepted'),
    eb('exception_expired', '=', false),
    eb.or([eb('exception_expiry', 'is', null), eb('exception_expiry', '>=', today)]),
  ]);
}

function filterOf(eb: Eb, ref: SessionRef, f: FindingsFilter): Expression<SqlBool> {
  const all: Expression<SqlBool>[] = [eb('client_id', '=', ref.clientId), eb('session_id', '=', ref.sessionId)];
  // Severity and status filter on their sort keys, which the sort indexes cover.
  if (f.severities !== undefined) all.push(eb('severity_key', 'in', f.severities.map(severityKey)));
  if (f.kev !== undefined) all.push(eb('kev', '=', f.kev));
  if (f.statuses !== undefined)
    all.push(
      eb(
        'status_key',
        'in',
        f.statuses.map((s) => statusKey(s === 'untracked' ? null : s)),
      ),
    );
  if (f.exceptions !== undefined) {
    const either: Expression<SqlBool>[] = [];
    const active = activeException(eb, f.today);
    if (f.exceptions.includes('active')) either.push(active);
    if (f.exceptions.includes('expired')) either.push(eb.and([eb('exception_status', 'is not', null), eb.not(active)]));
    if (f.exceptions.includes('none')) either.push(eb('exception_status', 'is', null));
    all.push(eb.or(either));
  }
  if (f.host !== undefined) {
    const pattern = contains(f.host);
    all.push(eb.or([eb(eb.fn('lower', ['host']), 'like', pattern), eb(eb.fn('lower', ['hostname']), 'like', pattern)]));
  }
  if (f.port !== undefined) all.push(eb('port_key', '=', f.port));
  if (f.cve !== undefined) all.push(sql<SqlBool>`${f.cve} = ANY(cve_ids)`);
  if (f.q !== undefined) all.push(eb('search', 'like', contains(f.q)));
  return eb.and(all);
}

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
  filter: FindingsFilter,
  page: PageRequest,
): Promise<FindingRecord[]> {
  const column: SortColumn = SORT_COLUMNS[page.sort];
  const { after } = page;
  const cmp = page.order === 'asc' ? '>' : '<';
  return db
    .selectFrom('session_findings')
    .selectAll()
    .where((eb) => filterOf(eb, ref, filter))
    .$if(after !== undefined, (q) =>
      q.where(
        (eb) => eb.refTuple(column, 'ordinal'),
        cmp,
        (eb) => eb.tuple((after as [string | number, number])[0] as never, (after as [string | number, number])[1]),
      ),
    )
    .orderBy(column, page.order)
    .orderBy('ordinal', page.order)
    .limit(page.limit + 1)
    .execute();
}

export async function findingsCount(db: Kysely<Database>, ref: SessionRef, filter: FindingsFilter): Promise<number> {
  const { n } = await db
    .selectFrom('session_findings')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where((eb) => filterOf(eb, ref, filter))
    .executeTakeFirstOrThrow();
  return Number(n);
}

export function findingAt(
  db: Kysely<Database>,
  ref: SessionRef,
  ordinal: number,
): Promise<FindingWithDetail | undefined> {
  return db
    .selectFrom('session_findings as f')
    .innerJoin('session_finding_details as d', (j) =>
      j
        .onRef('d.client_id', '=', 'f.client_id')
        .onRef('d.session_id', '=', 'f.session_id')
        .onRef('d.ordinal', '=', 'f.ordinal'),
    )
    .selectAll('f')
    .select('d.detail')
    .where('f.client_id', '=', ref.clientId)
    .where('f.session_id', '=', ref.sessionId)
    .where('f.ordinal', '=', ordinal)
    .executeTakeFirst();
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

/**
 * The remediation updates that named this finding (by fingerprint, or by its title), oldest
 * first. `auditClientId` is the client id as the audit log records it (null: no client).
 */
export function remediationEventsOf(
  db: Kysely<Database>,
  where: { auditClientId: string | null; sessionId: string; fingerprint: string | null; title: string },
): Promise<{ actor: string; data: unknown; created_at: Date }[]> {
  const items = [{ title: where.title }, ...(where.fingerprint === null ? [] : [{ fingerprint: where.fingerprint }])];
  return db
    .selectFrom('audit_events')
    .select(['actor', 'data', 'created_at'])
    .where('session_id', '=', where.sessionId)
    .where((eb) =>
      where.auditClientId === null ? eb('client_id', 'is', null) : eb('client_id', '=', where.auditClientId),
    )
    .where('event_type', '=', 'remediation_updated')
    .where((eb) =>
      eb.or(items.map((item) => sql<SqlBool>`${eb.ref('data')}->'items' @> ${JSON.stringify([item])}::jsonb`)),
    )
    .orderBy('created_at')
    .orderBy('id')
    .limit(200)
    .execute();
}
