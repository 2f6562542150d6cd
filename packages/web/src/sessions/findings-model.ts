import type {
  ExceptionFilter,
  FindingRow,
  FindingSort,
  FindingStatusFilter,
  FindingsQuery,
  RemediationUpdateItem,
  Severity,
} from '@svc/protocol';

/** What the findings table asks the portal for: filters and sort (the cursor is kept apart). */
export interface FindingsView {
  q: string;
  severity: Severity | '';
  status: FindingStatusFilter | '';
  exception: ExceptionFilter | '';
  kev: 'true' | 'false' | '';
  host: string;
  port: string;
  cve: string;
  sort: FindingSort;
  order: 'asc' | 'desc';
}

export const FIRST_VIEW: FindingsView = {
  q: '',
  severity: '',
  status: '',
  exception: '',
  kev: '',
  host: '',
  port: '',
  cve: '',
  sort: 'severity',
  order: 'desc',
};

/** Rows per page: the first page is all the session view loads. */
export const PAGE_SIZE = 25;

/** Most severe and highest score first; everything else ascending. */
export const defaultOrder = (sort: FindingSort): 'asc' | 'desc' =>
  sort === 'severity' || sort === 'cvss' ? 'desc' : 'asc';

/** Clicking a column: the same column turns the order around, another starts with its default order. */
export function sortBy(view: FindingsView, sort: FindingSort): FindingsView {
  if (view.sort === sort) return { ...view, order: view.order === 'asc' ? 'desc' : 'asc' };
  return { ...view, sort, order: defaultOrder(sort) };
}

const blank = (s: string) => (s.trim() === '' ? undefined : s.trim());

/** The portal query of a view; empty fields are left out. */
export function queryOf(view: FindingsView, cursor: string): Omit<FindingsQuery, 'client_id'> {
  const port = blank(view.port);
  return {
    q: blank(view.q),
    severity: view.severity || undefined,
    status: view.status || undefined,
    exception: view.exception || undefined,
    kev: view.kev || undefined,
    host: blank(view.host),
    port: port === undefined ? undefined : Number(port),
    cve: blank(view.cve),
    sort: view.sort,
    order: view.order,
    limit: PAGE_SIZE,
    cursor: cursor === '' ? undefined : cursor,
  };
}

/** `host:port/protocol`, or the host alone for host-level findings. */
export function where(f: Pick<FindingRow, 'host' | 'port' | 'protocol'>): string {
  const host = f.host ?? '–';
  return f.port === null ? host : `${host}:${f.port}${f.protocol ? `/${f.protocol}` : ''}`;
}

export const titleOf = (f: Pick<FindingRow, 'title'>) => (f.title === '' ? '(untitled)' : f.title);
export const nameOf = (f: FindingRow) => `${titleOf(f)} on ${where(f)}`;

/**
 * How a change reaches a finding's remediation entry: by its fingerprint (this finding
 * only) or, for older files whose entries carry none, by title (every entry of the title).
 * Null when the finding has no entry.
 */
export function targetOf(f: FindingRow): Pick<RemediationUpdateItem, 'fingerprint' | 'title'> | null {
  if (f.tracked_by === 'fingerprint' && f.fingerprint !== null) return { fingerprint: f.fingerprint };
  if (f.tracked_by === 'title') return { title: f.title };
  return null;
}

export function exceptionText(f: FindingRow): string {
  const e = f.exception;
  if (e === null) return 'none';
  const state = e.state === 'active' ? 'accepted' : 'expired';
  return `${state} until ${e.expiry ?? 'no expiry'}${e.approver ? `, by ${e.approver}` : ''}`;
}

/** The kev filter's choices as the console names them. */
export const KEV_CHOICES: Readonly<Record<'true' | 'false', string>> = {
  true: 'Known exploited',
  false: 'Not known exploited',
};

/** `EPSS 42.0 % (97th percentile)`, or null without a score. */
export function epssText(f: Pick<FindingRow, 'epss' | 'epss_percentile'>): string | null {
  if (f.epss === null) return null;
  const pct = f.epss_percentile === null ? '' : ` (${ordinal(Math.round(f.epss_percentile * 100))} percentile)`;
  return `EPSS ${(f.epss * 100).toFixed(1)} %${pct}`;
}

function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}

/** What the KEV badge's tooltip and the detail say. */
export const kevText = (f: Pick<FindingRow, 'kev_date_added'>): string =>
  `In CISA's Known Exploited Vulnerabilities catalogue${f.kev_date_added === null ? '' : ` since ${f.kev_date_added}`}`;
