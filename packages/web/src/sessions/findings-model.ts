import {
  type BulkResponse,
  type DecisionSource,
  type DueDays,
  type ExceptionFilter,
  type FindingChange,
  type FindingHistoryEntry,
  type FindingRow,
  type FindingSort,
  type FindingStatusFilter,
  type FindingsQuery,
  type RemediationUpdateItem,
  SEVERITIES,
  type Severity,
} from '@svc/protocol';
import type { QueryOf } from '../api/query-of.ts';
import { countOf, formatCount, label, NO_VALUE } from '../ui/format.ts';

/** A change filter: one change, or `found`, the findings this scan reported (new, persistent or reopened). */
export type ChangeFilter = FindingChange | 'found';
export const CHANGE_FILTERS: readonly ChangeFilter[] = [
  'found',
  'new',
  'persistent',
  'reopened',
  'resolved',
  'not_checked',
];
const FOUND: readonly FindingChange[] = ['new', 'persistent', 'reopened'];

/** What a change answered, as the findings table shows it. */
export type Message = { kind: 'ok' | 'error'; text: string };

/** What the findings table asks the portal for: filters and sort (the cursor is kept apart). */
export interface FindingsView {
  q: string;
  severity: Severity | '';
  status: FindingStatusFilter | '';
  exception: ExceptionFilter | '';
  /** What this scan did to the finding of record (docs/findings-of-record.md); `found`: any it reported. */
  change: ChangeFilter | '';
  disposition: 'false_positive' | 'none' | '';
  overdue: 'true' | 'false' | '';
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
  change: '',
  disposition: '',
  overdue: '',
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
export function queryOf(view: FindingsView, cursor: string): QueryOf<Omit<FindingsQuery, 'client_id'>> {
  const port = blank(view.port);
  return {
    q: blank(view.q),
    severity: view.severity || undefined,
    status: view.status || undefined,
    exception: view.exception || undefined,
    change: view.change === 'found' ? FOUND.join(',') : view.change || undefined,
    disposition: view.disposition || undefined,
    overdue: view.overdue || undefined,
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
  const host = f.host ?? NO_VALUE;
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

/**
 * The risk exception in words. One a person accepted names its approver; one an uploaded file
 * set names the key that uploaded it, and the approver the file named is only reported, never
 * shown as an approval (docs/findings-of-record.md#who-decides).
 */
export function exceptionText(f: Pick<FindingRow, 'exception'>): string {
  const e = f.exception;
  if (e === null) return 'none';
  const state = e.state === 'active' ? 'accepted' : 'expired';
  const until = `${state} until ${e.expiry ?? 'no expiry'}`;
  if (e.source === 'upload') {
    const named = e.claimed_approver ? `; the file named approver ${e.claimed_approver}` : '';
    return `${until}, set by upload${e.approver ? ` (${e.approver})` : ''}${named}`;
  }
  if (e.source === 'migration')
    return `${until}, carried over from the stored session${e.approver ? ` (${e.approver})` : ''}`;
  return `${until}${e.approver ? `, by ${e.approver}` : ''}`;
}

/** Where a decision came from, when it was not a person's: null for a person's (or unknown). */
export function sourceText(source: DecisionSource | null | undefined): string | null {
  switch (source) {
    case 'upload':
      return 'set by upload';
    case 'scan':
      return 'set by the scan';
    case 'migration':
      return 'carried over from the stored session';
    default:
      return null;
  }
}

/** The mark of what this scan did to a finding; persistent (the usual) has none. */
export const CHANGE_MARKS: Readonly<Record<FindingChange, string | null>> = {
  new: 'New',
  persistent: null,
  reopened: 'Reopened',
  resolved: 'Resolved by this scan',
  not_checked: 'Not checked by this scan',
};

/** The changes panel's and the change filter's names. */
export const CHANGE_NAMES: Readonly<Record<ChangeFilter, string>> = {
  found: 'reported by this scan',
  new: 'new',
  persistent: 'still open',
  reopened: 'reopened',
  resolved: 'resolved by this scan',
  not_checked: 'not checked by this scan',
};

export const DISPOSITION_CHOICES: Readonly<Record<'false_positive' | 'none', string>> = {
  false_positive: 'False positive',
  none: 'Not a false positive',
};

export const OVERDUE_CHOICES: Readonly<Record<'true' | 'false', string>> = {
  true: 'Overdue',
  false: 'Not overdue',
};

/** `False positive: <reason> (by x, 2025-03-01)`, or null when the finding is not marked. */
export function dispositionText(f: Pick<FindingRow, 'disposition'>): string | null {
  const d = f.disposition;
  if (d === null || d === undefined) return null;
  return `False positive: ${d.reason}${d.by ? ` (by ${d.by}${d.at ? `, ${d.at.slice(0, 10)}` : ''})` : ''}`;
}

/** How a row can be changed: a finding of record (by fingerprint) this session reported or looked past. */
export const hasRecord = (f: FindingRow): f is FindingRow & { fingerprint: string } =>
  f.tracked_by === 'fingerprint' && f.fingerprint !== null;

const fpReason = (v: string | null | undefined) => (v ?? '').replace(/^false_positive:\s*/, '');

/** What one history entry with `field` changed, in words. */
function changeText(h: FindingHistoryEntry): string {
  const from = h.from ?? null;
  const to = h.to ?? null;
  switch (h.field) {
    case 'status':
      return `status ${from === null ? '' : `${label(from)} → `}${to === null ? 'none' : label(to)}${h.detail ? ` (${h.detail})` : ''}`;
    case 'note':
      return to === null ? 'note cleared' : `note: ${to}`;
    case 'exception':
      if (to === null) return `exception withdrawn${from === null ? '' : ` (was: ${from})`}`;
      return from === null || h.detail === 'accepted'
        ? `exception accepted: ${to}`
        : `exception changed: ${from} → ${to}`;
    case 'disposition':
      return to === null
        ? `false positive withdrawn${from === null ? '' : ` (was: ${fpReason(from)})`}`
        : `marked as false positive: ${fpReason(to)}`;
    default:
      return `${h.field}: ${from ?? 'none'} → ${to ?? 'none'}`;
  }
}

/**
 * One line of a finding's history (after its date and actor): what changed from what to what,
 * where the change came from when it was not a person, and with which session; a claim of an
 * uploaded file that was not applied says so ("claimed by upload, not applied: …"). Entries
 * without `field` (older answers) say what their status and exception became.
 */
export function historyText(h: FindingHistoryEntry): string {
  const by = sourceText(h.source);
  const session = h.session_id ? `, with session ${h.session_id}` : '';
  if (h.field === 'claim') {
    const why = (h.detail ?? '').replace(/^not applied:\s*/, '');
    return `${h.to ?? 'a change'} claimed by upload, not applied${why ? `: ${why}` : ''}${session}`;
  }
  if (h.field !== undefined) return `${changeText(h)}${by ? ` (${by})` : ''}${session}`;
  return (
    [
      h.status === null ? null : `status ${label(h.status)}`,
      h.exception === null
        ? null
        : `exception ${h.exception.action}${h.exception.expiry ? ` until ${h.exception.expiry}` : ''}${
            h.exception.reason ? ` (${h.exception.reason})` : ''
          }`,
    ]
      .filter((x) => x !== null)
      .join(', ') || 'note'
  );
}

/** The kev filter's choices as the console names them. */
export const KEV_CHOICES: Readonly<Record<'true' | 'false', string>> = {
  true: 'Known exploited',
  false: 'Not known exploited',
};

/** `EPSS 42.0 %`: the score alone, as lists show it. */
export const epssScore = (epss: number): string => `EPSS ${(epss * 100).toFixed(1)} %`;

/** `EPSS 42.0 % (97th percentile)`, or null without a score. */
export function epssText(f: Pick<FindingRow, 'epss' | 'epss_percentile'>): string | null {
  if (f.epss === null) return null;
  const pct = f.epss_percentile === null ? '' : ` (${ordinal(Math.round(f.epss_percentile * 100))} percentile)`;
  return `${epssScore(f.epss)}${pct}`;
}

function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}

/** What the KEV badge's tooltip and the detail say. */
export const kevText = (f: Pick<FindingRow, 'kev_date_added'>): string =>
  `In CISA's Known Exploited Vulnerabilities catalogue${f.kev_date_added === null ? '' : ` since ${f.kev_date_added}`}`;

/** The due-days form's fields as typed. */
export type DueDaysDraft = Record<Severity, string>;

export const SEVERITY_NAMES: Readonly<Record<Severity, string>> = {
  critical: 'Critical',
  high: 'High',
  medium: 'Medium',
  low: 'Low',
  info: 'Info',
};

/** The due days a draft states, or the first field that is not a whole number of days from 1 to 3650. */
export function parseDueDays(draft: DueDaysDraft): { ok: true; days: DueDays } | { ok: false; message: string } {
  const days = {} as DueDays;
  for (const s of SEVERITIES) {
    const raw = draft[s].trim();
    if (raw === '') {
      days[s] = null;
      continue;
    }
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || n < 1 || n > 3650)
      return {
        ok: false,
        message: `Days for ${s} findings must be a whole number from 1 to 3650, or empty (never due)`,
      };
    days[s] = n;
  }
  return { ok: true, days };
}

/**
 * What a bulk change answered, in words: how many of the selected findings the portal matched
 * and changed, and which were left out (no fingerprint: an older file's entry; resolved: no
 * exception on a resolved finding; unmatched: not a finding of this session's client and target).
 */
export function bulkMessage(
  what: string,
  selected: number,
  answer: BulkResponse,
  left: { noFingerprint: number; resolved?: number },
): Message {
  const parts = [
    `${what} for ${countOf(selected, 'selected finding', 'selected findings')}: ${formatCount(answer.matched)} matched, ${formatCount(answer.changed)} changed.`,
  ];
  if (left.noFingerprint > 0) parts.push(`${formatCount(left.noFingerprint)} without a fingerprint left unchanged.`);
  if ((left.resolved ?? 0) > 0) parts.push(`${formatCount(left.resolved ?? 0)} resolved left without an exception.`);
  if (answer.unmatched.length > 0) parts.push(`${formatCount(answer.unmatched.length)} not found.`);
  return { kind: 'ok', text: parts.join(' ') };
}
