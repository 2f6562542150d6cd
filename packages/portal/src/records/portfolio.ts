import {
  hostMatchOf,
  RECORD_DISPOSITION_FILTERS,
  RECORD_EXCEPTION_FILTERS,
  RECORD_STATUS_FILTERS,
  type RecordFilter,
  type RecordsQuery,
  type RecordsResponse,
  type RecordsSummaryResponse,
  BULK_MAX_FINDINGS,
  RECORD_SORT_DEFAULT,
  type RecordsCountQuery,
  type RecordsCountResponse,
  type RecordSort,
  RECORDS_PAGE_DEFAULT,
  REMEDIATION_STATUSES,
  SEVERITIES,
  type Severity,
} from '@svc/protocol';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { cursorFields, encodeCursor, isBigintText, isIntIn, isIsoInstant, isStorableText } from '../domain/cursor.ts';
import { DomainError } from '../domain/errors.ts';
import { badFindingsQuery, listOf } from './query-params.ts';
import { presentRecord } from './present.ts';
import type { RecordRow } from './model.ts';
import {
  type KeySort,
  keyOfRow,
  type RecordPosition,
  recordCount,
  recordPage,
  type RecordSelection,
  recordSummary,
} from './portfolio-queries.ts';

/**
 * The findings of record across a caller's scope (GET /api/findings, docs/findings-of-record.md#the-portfolio):
 * every client the caller may see, or the ones it names, filtered and paged by cursor.
 */

const bad = badFindingsQuery;

function instant(v: string | undefined, param: string): Date | undefined {
  if (v === undefined) return undefined;
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) throw bad(`Invalid ${param} parameter: must be an ISO 8601 date-time`);
  return d;
}

/** A real calendar day (the schema checks only its shape: 2025-02-30 would reach PostgreSQL). */
function day(v: string, param: string): string {
  const d = new Date(`${v}T00:00:00.000Z`);
  if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== v)
    throw bad(`Invalid ${param} parameter: must be a day (YYYY-MM-DD)`);
  return v;
}

/**
 * The selection a filter names within `scope` (null: every client). A client named outside the
 * scope is refused (403), as the session listing does.
 */
export function selectionOf(f: RecordFilter, scope: readonly string[] | null, today: string): RecordSelection {
  let clientIds: string[] | null = scope === null ? null : [...scope];
  if (f.client_id !== undefined) {
    const named = [...new Set(f.client_id.split(',').map((c) => c.trim()))];
    if (scope !== null && named.some((c) => !scope.includes(c)))
      throw new DomainError('forbidden.client', 'Access to this client is not allowed');
    clientIds = named;
  }
  const statuses = listOf('status', f.status, RECORD_STATUS_FILTERS);
  return {
    clientIds,
    target: f.target,
    severities: listOf<Severity>('severity', f.severity, SEVERITIES),
    statuses: statuses?.filter((s) => (REMEDIATION_STATUSES as readonly string[]).includes(s)),
    open: statuses?.includes('open'),
    kev: f.kev === undefined ? undefined : f.kev === 'true',
    exceptions: listOf('exception', f.exception, RECORD_EXCEPTION_FILTERS),
    dispositions: listOf('disposition', f.disposition, RECORD_DISPOSITION_FILTERS),
    firstSeenFrom: instant(f.first_seen_from, 'first_seen_from'),
    firstSeenTo: instant(f.first_seen_to, 'first_seen_to'),
    overdue: f.overdue === undefined ? undefined : f.overdue === 'true',
    epssMin: f.epss_min,
    dueBefore: f.due_before === undefined ? undefined : day(f.due_before, 'due_before'),
    host: f.host?.trim() ? hostMatchOf(f.host) : undefined,
    hostPrefix: f.host_prefix,
    today,
  };
}

/** The cursor after a row: severity order [key, first seen, id]; a one-key order [sort, key, id] (domain/cursor.ts). */
function cursorOf(sort: RecordSort, r: RecordRow & { id: string }): string {
  return sort === 'severity'
    ? encodeCursor([r.severity_key, r.first_seen_at.toISOString(), r.id])
    : encodeCursor([sort, keyOfRow(sort, r), r.id]);
}

/** A key of its order's type: an instant as the portal writes it, a day, an EPSS, storable text. */
function isKeyOf(sort: KeySort, v: unknown): boolean {
  if (v === null) return sort !== 'first_seen_desc' && sort !== 'first_seen_asc';
  switch (sort) {
    case 'first_seen_desc':
    case 'first_seen_asc':
      return isIsoInstant(v);
    case 'due_date_asc':
      return isStorableText(v) && v.length <= 64;
    case 'epss_desc':
      return typeof v === 'number' && Number.isFinite(v);
    case 'host_asc':
      return isStorableText(v) && v.length <= 1024;
  }
}

const BAD_CURSOR = 'Invalid cursor parameter: use next_cursor of the previous page';

/** Only a cursor this listing wrote for this sort: any other (or another sort's) is a 400. */
function positionOf(sort: RecordSort, value: string | undefined): RecordPosition {
  if (value === undefined || value === '') return { sort, after: undefined } as RecordPosition;
  const fields = cursorFields(value);
  if (sort === 'severity') {
    const [key, at, id] = fields ?? [];
    if (fields?.length !== 3 || !isIntIn(key, -1, SEVERITIES.length - 1) || !isIsoInstant(at) || !isBigintText(id))
      throw bad(BAD_CURSOR);
    return { sort, after: [key, at, id] };
  }
  const [named, key, id] = fields ?? [];
  if (fields?.length !== 3 || named !== sort || !isKeyOf(sort, key) || !isBigintText(id)) throw bad(BAD_CURSOR);
  return { sort, after: [key as string | number | null, id] };
}

export async function recordsPage(
  db: Kysely<Database>,
  scope: readonly string[] | null,
  q: RecordsQuery,
  today: string,
): Promise<RecordsResponse> {
  const { limit: askedLimit, cursor, sort = RECORD_SORT_DEFAULT, ...filter } = q;
  const selection = selectionOf(filter, scope, today);
  const limit = askedLimit ?? RECORDS_PAGE_DEFAULT;
  const position = positionOf(sort, cursor);
  if (selection.clientIds !== null && selection.clientIds.length === 0) return { findings: [], next_cursor: null };
  const rows = await recordPage(db, selection, position, limit + 1);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    findings: page.map((r) => presentRecord(r, today)),
    next_cursor: rows.length > limit && last !== undefined ? cursorOf(sort, last) : null,
  };
}

export async function recordsSummary(
  db: Kysely<Database>,
  scope: readonly string[] | null,
  f: RecordFilter,
  today: string,
): Promise<RecordsSummaryResponse> {
  const selection = selectionOf(f, scope, today);
  const c = selection.clientIds !== null && selection.clientIds.length === 0 ? {} : await recordSummary(db, selection);
  const n = (k: string) => c[k] ?? 0;
  return {
    total: n('total'),
    open: n('open'),
    overdue: n('overdue'),
    by_severity: { critical: n('critical'), high: n('high'), medium: n('medium'), low: n('low'), info: n('info') },
    by_status: {
      new: n('s_new'),
      persistent: n('s_persistent'),
      in_progress: n('s_in_progress'),
      resolved: n('s_resolved'),
      deferred: n('s_deferred'),
    },
    exceptions: { accepted: n('accepted'), expired: n('expired') },
    false_positive: n('false_positive'),
  };
}

/** What a filter matches, counted up to `upto` (default and at most the bulk limit). */
export async function recordsCount(
  db: Kysely<Database>,
  scope: readonly string[] | null,
  q: RecordsCountQuery,
  today: string,
): Promise<RecordsCountResponse> {
  const { upto = BULK_MAX_FINDINGS, ...filter } = q;
  const selection = selectionOf(filter, scope, today);
  if (selection.clientIds !== null && selection.clientIds.length === 0) return { count: 0, capped: false };
  const n = await recordCount(db, selection, upto);
  return n > upto ? { count: upto, capped: true } : { count: n, capped: false };
}
