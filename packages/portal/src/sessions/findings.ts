import {
  EXCEPTION_FILTERS,
  type ExceptionFilter,
  FINDING_STATUS_FILTERS,
  type FindingDetailResponse,
  type FindingHistoryEntry,
  type FindingRow,
  type FindingSort,
  type FindingsQuery,
  type FindingsResponse,
  type FindingStatusFilter,
  FINDINGS_PAGE_DEFAULT,
  lenient,
  type RemediationStatus,
  type SessionBlocksResponse,
  SEVERITIES,
  type Severity,
} from '@svc/protocol';
import type { Kysely } from 'kysely';
import type { AppContext } from '../context.ts';
import type { Database } from '../db/schema.ts';
import { DomainError } from '../domain/errors.ts';
import { changedRows, indexRowsOf, viewBlocksOf } from './findings-index.ts';
import {
  type FindingRecord,
  type FindingsFilter,
  findingAt,
  findingsCount,
  findingsPage,
  indexState,
  patchFindingsIndex,
  remediationEventsOf,
  replaceFindingsIndex,
  SORT_COLUMNS,
  viewBlocksOfSession,
} from './findings-queries.ts';
import { readSessionDocument } from './open-file.ts';
import { clientIdOut } from './present.ts';
import { findSession, lockSessionRow, type SessionRef, type SessionRow } from './queries.ts';

/**
 * The findings index: a session's findings as rows the portal filters, sorts and pages, so
 * the console never downloads a whole session file to show a table. Written in the same
 * transaction as every change of the stored session file (upload, remediation update), and
 * rebuilt from the file when the two disagree (a session stored before the index existed).
 */

/** Index an uploaded file inside the upload's transaction (the session row is locked). */
export function indexUploadedFile(db: Kysely<Database>, ref: SessionRef, fileKey: string, doc: unknown): Promise<void> {
  return replaceFindingsIndex(db, ref, { fileKey, rows: indexRowsOf(doc), ...viewBlocksOf(doc) });
}

/**
 * Keep the index in step with a remediation update, inside its transaction: only the rows
 * whose remediation fields changed are written, unless the index was not built from the
 * file the update started from; then it is rebuilt from the new file.
 */
export async function indexRemediatedFile(
  db: Kysely<Database>,
  ref: SessionRef,
  files: { beforeKey: string; before: unknown; afterKey: string; after: unknown },
): Promise<void> {
  const after = indexRowsOf(files.after);
  const changes =
    (await indexState(db, ref))?.file_key === files.beforeKey ? changedRows(indexRowsOf(files.before), after) : null;
  if (changes !== null) await patchFindingsIndex(db, ref, files.afterKey, changes);
  else await replaceFindingsIndex(db, ref, { fileKey: files.afterKey, rows: after, ...viewBlocksOf(files.after) });
}

const INDEX_ATTEMPTS = 3;

/**
 * Make sure the index matches the session's stored file, building it when it does not.
 * The file is read outside any transaction; the rows are written only if the session still
 * references that file (a concurrent update that got there first has indexed its own).
 */
export async function ensureIndexed(ctx: AppContext, session: SessionRow): Promise<number> {
  const ref = { clientId: session.client_id, sessionId: session.session_id };
  let row: SessionRow | undefined = session;
  for (let attempt = 0; attempt < INDEX_ATTEMPTS && row !== undefined; attempt++) {
    const key = row.files['session_results.json']?.key;
    const state = await indexState(ctx.db, ref);
    if (key === undefined) return 0;
    if (state?.file_key === key) return state.total;
    const { doc, key: readKey } = await readSessionDocument(ctx, row);
    const total = await ctx.db.transaction().execute(async (trx) => {
      const locked = await lockSessionRow(trx, ref);
      if (locked?.files['session_results.json']?.key !== readKey) return null;
      const current = await indexState(trx, ref);
      if (current?.file_key === readKey) return current.total;
      const rows = indexRowsOf(doc);
      await replaceFindingsIndex(trx, ref, { fileKey: readKey, rows, ...viewBlocksOf(doc) });
      return rows.length;
    });
    if (total !== null) return total;
    row = await findSession(ctx.db, ref);
  }
  if (row === undefined) throw new DomainError('not_found.session', 'Session not found');
  throw new DomainError('conflict.session_changed', 'The session changed while its findings were indexed; try again');
}

// ---- request parsing ----

const bad = (message: string) => new DomainError('invalid.findings_query', message);

function listOf<T extends string>(param: string, value: string | undefined, allowed: readonly T[]): T[] | undefined {
  if (value === undefined) return undefined;
  const parts = value.split(',').map((p) => p.trim().toLowerCase());
  for (const p of parts)
    if (!(allowed as readonly string[]).includes(p))
      throw bad(`Invalid ${param} parameter ${JSON.stringify(p)}: must be one of ${allowed.join(', ')}`);
  return [...new Set(parts)] as T[];
}

const TEXT_SORTS: readonly FindingSort[] = ['host', 'cve', 'first_seen'];

/** The cursor names the sort it was made for and the last row's position in it. */
function encodeCursor(sort: FindingSort, order: 'asc' | 'desc', row: FindingRecord): string {
  return Buffer.from(JSON.stringify([sort, order, row[SORT_COLUMNS[sort]], row.ordinal])).toString('base64url');
}

function decodeCursor(value: string, sort: FindingSort, order: 'asc' | 'desc'): [string | number, number] {
  const invalid = bad('Invalid cursor parameter: use next_cursor of a page with the same sort and order');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch {
    throw invalid;
  }
  if (!Array.isArray(parsed) || parsed.length !== 4 || parsed[0] !== sort || parsed[1] !== order) throw invalid;
  const [, , key, ordinal] = parsed as unknown[];
  const keyOk = TEXT_SORTS.includes(sort)
    ? typeof key === 'string' && key.length <= 1024
    : Number.isInteger(key) && Math.abs(key as number) < 2 ** 31;
  if (!keyOk || !Number.isInteger(ordinal) || (ordinal as number) < 0 || (ordinal as number) >= 2 ** 31) throw invalid;
  return [key as string | number, ordinal as number];
}

function filterOf(q: FindingsQuery, today: string): FindingsFilter {
  return {
    severities: listOf<Severity>('severity', q.severity, SEVERITIES),
    statuses: listOf<FindingStatusFilter>('status', q.status, FINDING_STATUS_FILTERS),
    exceptions: listOf<ExceptionFilter>('exception', q.exception, EXCEPTION_FILTERS),
    kev: q.kev === undefined ? undefined : q.kev === 'true',
    host: q.host?.trim() || undefined,
    port: q.port,
    cve: q.cve?.toUpperCase(),
    q: q.q?.trim() || undefined,
    today,
  };
}

// ---- presenting ----

const today = (ctx: AppContext) => ctx.now().toISOString().slice(0, 10);

function presentRow(r: FindingRecord, day: string): FindingRow {
  const active =
    r.exception_status === 'accepted' &&
    !r.exception_expired &&
    (r.exception_expiry === null || r.exception_expiry >= day);
  return {
    index: r.ordinal,
    fingerprint: r.fingerprint,
    title: r.title,
    severity: r.severity as Severity | null,
    cvss: r.cvss === null ? null : r.cvss_key / 10,
    cve_ids: r.cve_ids,
    kev: r.kev,
    kev_date_added: r.kev_date_added,
    epss: r.epss,
    epss_percentile: r.epss_percentile,
    host: r.host,
    hostname: r.hostname,
    port: r.port,
    protocol: r.protocol,
    status: r.status as RemediationStatus | null,
    tracked_by: r.tracked_by as FindingRow['tracked_by'],
    first_seen: r.first_seen,
    status_changed: r.status_changed,
    note: r.note,
    exception:
      r.exception_status === null
        ? null
        : {
            state: active ? 'active' : 'expired',
            reason: r.exception_reason,
            approver: r.exception_approver,
            approved_at: r.exception_approved_at,
            expiry: r.exception_expiry,
          },
  };
}

/** One page of a session's findings (the session is already resolved within the caller's scope). */
export async function listFindings(ctx: AppContext, session: SessionRow, q: FindingsQuery): Promise<FindingsResponse> {
  const day = today(ctx);
  const filter = filterOf(q, day);
  const sort = q.sort ?? 'severity';
  const order = q.order ?? (sort === 'severity' || sort === 'cvss' ? 'desc' : 'asc');
  const limit = q.limit ?? FINDINGS_PAGE_DEFAULT;
  const after = q.cursor === undefined || q.cursor === '' ? undefined : decodeCursor(q.cursor, sort, order);
  const all = await ensureIndexed(ctx, session);
  const ref = { clientId: session.client_id, sessionId: session.session_id };
  // Without filters the total is the index's own count: no need to count the rows again.
  const unfiltered = Object.entries(filter).every(([k, v]) => k === 'today' || v === undefined);
  const [rows, total] = await Promise.all([
    findingsPage(ctx.db, ref, filter, { sort, order, after, limit }),
    unfiltered ? all : findingsCount(ctx.db, ref, filter),
  ]);
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  const last = page.at(-1);
  return {
    session_id: session.session_id,
    client_id: clientIdOut(session.client_id),
    total,
    findings: page.map((r) => presentRow(r, day)),
    next_cursor: more && last !== undefined ? encodeCursor(sort, order, last) : null,
  };
}

const obj = (v: unknown) => (lenient.isObj(v) ? v : {});
const textOrNull = (v: unknown) => (typeof v === 'string' ? v : null);
const texts = (v: unknown) => lenient.arr(v).filter((x): x is string => typeof x === 'string');

/** One finding with what the detail panel shows: evidence, references and its history of remediation updates. */
export async function findingDetail(
  ctx: AppContext,
  session: SessionRow,
  index: number,
): Promise<FindingDetailResponse> {
  await ensureIndexed(ctx, session);
  const ref = { clientId: session.client_id, sessionId: session.session_id };
  const r = await findingAt(ctx.db, ref, index);
  if (r === undefined) throw new DomainError('not_found.finding', 'Finding not found');
  const events = await remediationEventsOf(ctx.db, {
    auditClientId: clientIdOut(session.client_id),
    sessionId: session.session_id,
    fingerprint: r.fingerprint,
    title: r.title,
  });
  const history: FindingHistoryEntry[] = events.map((e) => {
    const data = obj(e.data);
    const item = lenient
      .objs(data['items'])
      .findLast((i) => (r.fingerprint !== null && i['fingerprint'] === r.fingerprint) || i['title'] === r.title);
    const exception = lenient.objs(data['exceptions']).findLast((x) => x['fingerprint'] === r.fingerprint);
    return {
      at: e.created_at.toISOString(),
      actor: e.actor,
      status: textOrNull(item?.['status']),
      exception:
        exception === undefined
          ? null
          : {
              action: String(exception['action']),
              reason: textOrNull(exception['reason']),
              expiry: textOrNull(exception['expiry']),
            },
    };
  });
  const d = obj(r.detail);
  const refs = obj(d['references']);
  return {
    ...presentRow(r, today(ctx)),
    rule_id: textOrNull(d['rule_id']),
    service: textOrNull(d['service']),
    evidence: textOrNull(d['evidence']),
    description: textOrNull(d['description']),
    remediation: textOrNull(d['remediation']),
    references: { cve: texts(refs['cve']), cwe: texts(refs['cwe']), urls: texts(refs['urls']) },
    prior_status: textOrNull(d['prior_status']),
    history,
  };
}

/** The topology and ORC 9.64 blocks of the session file, from the index. */
export async function sessionBlocks(ctx: AppContext, session: SessionRow): Promise<SessionBlocksResponse> {
  await ensureIndexed(ctx, session);
  const row = await viewBlocksOfSession(ctx.db, { clientId: session.client_id, sessionId: session.session_id });
  return {
    topology: (row?.topology ?? null) as SessionBlocksResponse['topology'],
    orc_964: (row?.orc_964 ?? null) as SessionBlocksResponse['orc_964'],
  };
}
