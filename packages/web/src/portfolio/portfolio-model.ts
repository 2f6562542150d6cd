import {
  BULK_MAX_FINDINGS,
  type BulkResponse,
  RECORD_SORT_DEFAULT,
  RECORD_SORTS,
  RECORDS_PAGE_MAX,
  type RecordFilter,
  type RecordSort,
  type RecordFinding,
  RecordFilter as RecordFilterSchema,
} from '@svc/protocol';
import { formatCount } from '../ui/format.ts';

/**
 * The portfolio view's state as the address holds it (so a view can be linked): the portal's
 * own filter names (protocol RecordFilter, GET /api/findings), first seen as days, the order
 * and the page size. Pure, so the round trip is tested without a browser. The address is also
 * how a view is saved: bookmarked or shared, it opens the same filters, order and page size.
 */

export type FilterKey = keyof RecordFilter;
/** The API's filter names, in the schema's order: the address uses exactly these. */
export const FILTER_KEYS = Object.keys(RecordFilterSchema.properties) as FilterKey[];

/** Rows per page to choose from; none above the portal's RECORDS_PAGE_MAX (a bigger one would be a 400). */
export const PAGE_SIZES = [25, 50, 100, 250, 500] as const;
export const DEFAULT_PAGE_SIZE = 25;

/** Each order said with its direction, so no separate "ascending / descending" is needed. */
export const SORT_LABELS: Record<RecordSort, string> = {
  severity: 'Severity: highest first',
  first_seen_desc: 'First seen: newest first',
  first_seen_asc: 'First seen: oldest first',
  due_date_asc: 'Due date: soonest first',
  epss_desc: 'EPSS: highest first',
  host_asc: 'Host: A to Z',
};

export interface PortfolioView {
  /** Each filter as written in the address; first_seen_from / first_seen_to are days (YYYY-MM-DD). */
  filter: Partial<Record<FilterKey, string>>;
  perPage: number;
  sort: RecordSort;
}

/** An order the portal knows, else the default (an old or mistyped link still opens). */
const sortOf = (v: string | undefined): RecordSort =>
  (RECORD_SORTS as readonly string[]).includes(v ?? '') ? (v as RecordSort) : RECORD_SORT_DEFAULT;

function pageSizeOf(v: string | undefined): number {
  const n = Number(v);
  return (PAGE_SIZES as readonly number[]).includes(n) && n <= RECORDS_PAGE_MAX ? n : DEFAULT_PAGE_SIZE;
}

/** The view an address names; blank values are no filter. */
export function viewOf(query: Readonly<Record<string, string | undefined>>): PortfolioView {
  const filter: PortfolioView['filter'] = {};
  for (const k of FILTER_KEYS) {
    const v = query[k]?.trim();
    if (v) filter[k] = v;
  }
  return { filter, perPage: pageSizeOf(query['per_page']), sort: sortOf(query['sort']) };
}

/** A link to the Findings page showing what `filter` selects, in its default order and page size. */
export const findingsHref = (filter: PortfolioView['filter']): string =>
  hrefOf({ filter, perPage: DEFAULT_PAGE_SIZE, sort: RECORD_SORT_DEFAULT });

/** The address of a view (and of a page of it: the cursor finds the rows, `page` only labels them). */
export function hrefOf(view: PortfolioView, at?: { cursor: string; page: number }): string {
  const q = new URLSearchParams();
  for (const k of FILTER_KEYS) {
    const v = view.filter[k]?.trim();
    if (v) q.set(k, v);
  }
  if (view.sort !== RECORD_SORT_DEFAULT) q.set('sort', view.sort);
  if (view.perPage !== DEFAULT_PAGE_SIZE) q.set('per_page', String(view.perPage));
  if (at !== undefined && at.cursor !== '') {
    q.set('cursor', at.cursor);
    q.set('page', String(at.page));
  }
  const qs = q.toString();
  return `/console/findings${qs === '' ? '' : `?${qs}`}`;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** A day as the API's instant: from its start; `to` is inclusive, so up to the next day's start. */
function instantOf(day: string, end: boolean): string {
  if (!DAY.test(day)) return day; // not a day: the portal says why (400)
  const d = new Date(`${day}T00:00:00.000Z`);
  if (Number.isNaN(d.getTime())) return day;
  return new Date(d.getTime() + (end ? 86_400_000 : 0)).toISOString();
}

/** The filter the portal is asked for (the same one a bulk change by filter sends). */
export function apiFilterOf(view: PortfolioView): RecordFilter {
  const f: Record<string, string> = { ...view.filter };
  if (f['first_seen_from'] !== undefined) f['first_seen_from'] = instantOf(f['first_seen_from'], false);
  if (f['first_seen_to'] !== undefined) f['first_seen_to'] = instantOf(f['first_seen_to'], true);
  // A number in a bulk change's JSON body; text that is none goes as typed and the portal says why.
  const epss = f['epss_min'];
  const out: Record<string, string | number> = { ...f };
  if (epss !== undefined && epss.trim() !== '' && Number.isFinite(Number(epss))) out['epss_min'] = Number(epss);
  return out as RecordFilter;
}

/** Whether "select all matching" can reach every match in one bulk change. */
export const fitsOneChange = (total: number) => total > 0 && total <= BULK_MAX_FINDINGS;

export const keyOf = (f: Pick<RecordFinding, 'client_id' | 'target' | 'fingerprint'>) =>
  `${f.client_id ?? ''}\u0000${f.target}\u0000${f.fingerprint}`;

/** Chosen rows by client and target: a bulk change by fingerprints names one client and target. */
export function groupsOf(
  rows: readonly RecordFinding[],
): { client_id: string; target: string; fingerprints: string[] }[] {
  const groups = new Map<string, { client_id: string; target: string; fingerprints: string[] }>();
  for (const r of rows) {
    const k = `${r.client_id ?? ''}\u0000${r.target}`;
    let g = groups.get(k);
    if (g === undefined) {
      g = { client_id: r.client_id ?? '', target: r.target, fingerprints: [] };
      groups.set(k, g);
    }
    g.fingerprints.push(r.fingerprint);
  }
  return [...groups.values()];
}

/** The answers of one bulk action added up. */
export function sumAnswers(answers: readonly BulkResponse[]): { matched: number; changed: number } {
  return answers.reduce((s, a) => ({ matched: s.matched + a.matched, changed: s.changed + a.changed }), {
    matched: 0,
    changed: 0,
  });
}

export const findingsWord = (n: number) => `${formatCount(n)} ${n === 1 ? 'finding' : 'findings'}`;

/** What a bulk action did, in words. */
export function outcomeText(what: string, sum: { matched: number; changed: number }): string {
  const unchanged = sum.matched - sum.changed;
  return `${what}: ${findingsWord(sum.changed)} changed${unchanged > 0 ? `, ${formatCount(unchanged)} already so` : ''}.`;
}
