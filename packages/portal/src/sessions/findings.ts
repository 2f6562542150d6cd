import {
  type DecisionSource,
  DISPOSITION_FILTERS,
  EXCEPTION_FILTERS,
  type ExceptionFilter,
  FINDING_CHANGES,
  FINDING_STATUS_FILTERS,
  type FindingChange,
  type FindingDetailResponse,
  type FindingHistoryEntry,
  type FindingRow,
  type FindingSort,
  type FindingsQuery,
  type FindingsResponse,
  type FindingStatusFilter,
  FINDINGS_PAGE_DEFAULT,
  hostMatchOf,
  lenient,
  REMEDIATION_STATUSES,
  type SessionBlocksResponse,
  SEVERITIES,
  type Severity,
} from '@svc/protocol';
import type { AppContext } from '../context.ts';
import { cursorFields, encodeCursor, isIntIn, isStorableText } from '../domain/cursor.ts';
import { DomainError } from '../domain/errors.ts';
import { badFindingsQuery, listOf } from '../records/query-params.ts';
import { addSightings, historyOf } from '../records/queries.ts';
import { indexRowsOf, viewBlocksOf } from './findings-index.ts';
import {
  changeCounts,
  type FindingRecord,
  type FindingsFilter,
  findingAt,
  findingsCount,
  findingsPage,
  indexState,
  viewBlocksOfSession,
} from './findings-queries.ts';
import { replaceFindingsIndex } from './findings-index-queries.ts';
import { readSessionDocument } from './open-file.ts';
import { clientIdOut } from './present.ts';
import { findSession, lockSessionRow, type SessionRow } from './queries.ts';
import { recordTarget } from './records-merge.ts';
import { ensureSeeded } from './records-seed.ts';
import { rowTriage } from './row-triage.ts';
import { recountSession } from './triage-counts-queries.ts';
import { rescoreSessions } from './triage-rescore.ts';

/**
 * The findings index: a session's findings as rows the portal filters, sorts and pages, so
 * the console never downloads a whole session file to show a table, read with the findings of
 * record of its target (what people decided). Written in the upload's transaction, and rebuilt
 * from the file when the two disagree (a session stored before the index, or before the records).
 */

const INDEX_ATTEMPTS = 3;

/**
 * Make sure the index matches the session's stored file, building it when it does not.
 * The file is read outside any transaction; the rows are written only if the session still
 * references that file (a concurrent update that got there first has indexed its own).
 */
export async function ensureIndexed(ctx: AppContext, session: SessionRow): Promise<number> {
  const ref = { clientId: session.client_id, sessionId: session.session_id };
  const target = recordTarget(session.target);
  let row: SessionRow | undefined = session;
  for (let attempt = 0; attempt < INDEX_ATTEMPTS && row !== undefined; attempt++) {
    const key = row.files['session_results.json']?.key;
    const state = await indexState(ctx.db, ref);
    if (key === undefined) return 0;
    if (state?.file_key === key) return state.total;
    // Its rows are joined to the records of its target: those come first.
    await ensureSeeded(ctx, ref.clientId, target);
    const { doc, key: readKey } = await readSessionDocument(ctx, row);
    const total = await ctx.db.transaction().execute(async (trx) => {
      const locked = await lockSessionRow(trx, ref);
      if (locked?.files['session_results.json']?.key !== readKey) return null;
      const current = await indexState(trx, ref);
      if (current?.file_key === readKey) return current.total;
      const rows = indexRowsOf(doc);
      await replaceFindingsIndex(trx, ref, { fileKey: readKey, rows, total: rows.length, ...viewBlocksOf(doc) });
      await addSightings(
        trx,
        { clientId: ref.clientId, target },
        ref.sessionId,
        rows.flatMap((r) => (r.fingerprint === null || r.fingerprint === undefined ? [] : [r.fingerprint])),
      );
      await recountSession(trx, ref, target);
      await rescoreSessions(trx, ref.clientId, [ref.sessionId], ctx.now().toISOString().slice(0, 10));
      return rows.length;
    });
    if (total !== null) return total;
    row = await findSession(ctx.db, ref);
  }
  if (row === undefined) throw new DomainError('not_found.session', 'Session not found');
  throw new DomainError('conflict.session_changed', 'The session changed while its findings were indexed; try again');
}

// ---- request parsing ----

const bad = badFindingsQuery;

/**
 * The range of each sort's key as the index writes it (findings-index.ts): severity -1
 * (unknown) to 4, CVSS times ten or -1, port or -1, status 0 to 5 (untracked); the others text.
 */
const KEY_RANGES: Record<FindingSort, readonly [number, number] | 'text'> = {
  severity: [-1, SEVERITIES.length - 1],
  cvss: [-1, 100],
  port: [-1, 65535],
  status: [0, REMEDIATION_STATUSES.length],
  host: 'text',
  cve: 'text',
  first_seen: 'text',
};
/** session_findings.ordinal is an integer. */
const MAX_ORDINAL = 2 ** 31 - 1;

/** The cursor names the sort it was made for and the last row's position in it. */
const cursorOf = (sort: FindingSort, order: 'asc' | 'desc', row: FindingRecord): string =>
  encodeCursor([sort, order, row.sort_key, row.ordinal]);

/** Only a cursor this listing wrote for this sort and order (domain/cursor.ts). */
function decodeCursor(value: string, sort: FindingSort, order: 'asc' | 'desc'): [string | number, number] {
  const fields = cursorFields(value);
  const [cSort, cOrder, key, ordinal] = fields ?? [];
  const range = KEY_RANGES[sort];
  const keyOk = range === 'text' ? isStorableText(key) : isIntIn(key, range[0], range[1]);
  if (fields?.length !== 4 || cSort !== sort || cOrder !== order || !keyOk || !isIntIn(ordinal, 0, MAX_ORDINAL))
    throw bad('Invalid cursor parameter: use next_cursor of a page with the same sort and order');
  return [key as string | number, ordinal];
}

function filterOf(q: FindingsQuery, today: string): FindingsFilter {
  return {
    severities: listOf<Severity>('severity', q.severity, SEVERITIES),
    statuses: listOf<FindingStatusFilter>('status', q.status, FINDING_STATUS_FILTERS),
    exceptions: listOf<ExceptionFilter>('exception', q.exception, EXCEPTION_FILTERS),
    changes: listOf<FindingChange>('change', q.change, FINDING_CHANGES),
    dispositions: listOf('disposition', q.disposition, DISPOSITION_FILTERS),
    overdue: q.overdue === undefined ? undefined : q.overdue === 'true',
    kev: q.kev === undefined ? undefined : q.kev === 'true',
    host: q.host?.trim() ? hostMatchOf(q.host) : undefined,
    port: q.port,
    cve: q.cve?.toUpperCase(),
    q: q.q?.trim() || undefined,
    today,
  };
}

// ---- presenting ----

const today = (ctx: AppContext) => ctx.now().toISOString().slice(0, 10);

function presentRow(r: FindingRecord, day: string): FindingRow {
  const t = rowTriage(r, day);
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
    status: t.status,
    tracked_by: r.r_fingerprint !== null ? 'fingerprint' : (r.tracked_by as FindingRow['tracked_by']),
    first_seen: t.firstSeen,
    status_changed: t.statusChanged,
    note: t.note,
    exception:
      t.exception === null
        ? null
        : {
            state: t.exception.state === 'accepted' ? 'active' : 'expired',
            reason: t.exception.reason,
            approver: t.exception.approver,
            approved_at: t.exception.approvedAt,
            expiry: t.exception.expiry,
            ...(t.exception.source === null ? {} : { source: t.exception.source }),
            claimed_approver: t.exception.claimedApprover,
          },
    in_scan: t.inScan,
    change: t.change,
    status_source: t.statusSource,
    disposition: t.disposition === null ? null : { disposition: 'false_positive', ...t.disposition },
    last_seen: t.lastSeen,
    resolved_at: t.resolvedAt,
    reopened_at: t.reopenedAt,
    due_date: t.dueDate,
    overdue: t.overdue,
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
  const target = recordTarget(session.target);
  // Without filters the total is the index's own count: no need to count the rows again.
  const unfiltered = Object.entries(filter).every(([k, v]) => k === 'today' || v === undefined);
  const [rows, total, counts] = await Promise.all([
    findingsPage(ctx.db, ref, target, filter, { sort, order, after, limit }),
    unfiltered ? all : findingsCount(ctx.db, ref, target, filter),
    after === undefined ? changeCounts(ctx.db, ref, target, day) : null,
  ]);
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  const last = page.at(-1);
  return {
    session_id: session.session_id,
    client_id: clientIdOut(session.client_id),
    total,
    findings: page.map((r) => presentRow(r, day)),
    next_cursor: more && last !== undefined ? cursorOf(sort, order, last) : null,
    ...(counts === null
      ? {}
      : {
          changes: Object.fromEntries(FINDING_CHANGES.map((c) => [c, counts.changes.get(c) ?? 0])) as Record<
            FindingChange,
            number
          >,
          overdue: counts.overdue,
        }),
  };
}

const obj = (v: unknown) => (lenient.isObj(v) ? v : {});
const textOrNull = (v: unknown) => (typeof v === 'string' ? v : null);
const texts = (v: unknown) => lenient.arr(v).filter((x): x is string => typeof x === 'string');

/** One finding with what the detail panel shows: evidence, references and the history of its record. */
export async function findingDetail(
  ctx: AppContext,
  session: SessionRow,
  index: number,
): Promise<FindingDetailResponse> {
  await ensureIndexed(ctx, session);
  const ref = { clientId: session.client_id, sessionId: session.session_id };
  const target = recordTarget(session.target);
  const r = await findingAt(ctx.db, ref, target, index);
  if (r === undefined) throw new DomainError('not_found.finding', 'Finding not found');
  const lines =
    r.r_fingerprint === null ? [] : await historyOf(ctx.db, { clientId: ref.clientId, target }, r.r_fingerprint, 200);
  const history: FindingHistoryEntry[] = lines.map((h) => ({
    at: h.at.toISOString(),
    actor: h.actor,
    source: h.source as DecisionSource,
    session_id: h.session_id,
    field: h.field as NonNullable<FindingHistoryEntry['field']>,
    from: h.from_value,
    to: h.to_value,
    detail: h.detail,
    status: h.field === 'status' ? h.to_value : null,
    exception:
      h.field === 'exception'
        ? { action: h.detail ?? (h.to_value === null ? 'withdrawn' : 'changed'), reason: h.to_value, expiry: null }
        : null,
  }));
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
