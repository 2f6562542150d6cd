import {
  type DecisionSource,
  type DueDays,
  dueDateOf,
  type RemediationStatus,
  type Severity,
  SEVERITIES,
} from '@svc/protocol';
import type { Selectable } from 'kysely';
import type { FindingRecordsTable } from '../db/schema.ts';

/**
 * A finding of record as the pure rules of this area handle it (docs/findings-of-record.md):
 * the table's row, `id` absent until it is stored; `is_open` is PostgreSQL's to compute.
 */
export type RecordRow = Omit<Selectable<FindingRecordsTable>, 'id' | 'is_open'> & { id?: string };

/** One line of a record's history, before it is stored. */
export interface HistoryLine {
  fingerprint: string;
  at: Date;
  actor: string;
  source: DecisionSource;
  session_id: string | null;
  field: 'status' | 'note' | 'exception' | 'disposition' | 'claim';
  from_value: string | null;
  to_value: string | null;
  detail: string | null;
}

/**
 * What of a record the session counts read: its status, whether it is a false positive, its
 * exception in effect ('' none, 'never' without expiry, else its last valid day) and its due
 * date ('' none).
 */
export interface TriageKey {
  status: RemediationStatus;
  falsePositive: boolean;
  exception: string;
  due: string;
}

export function triageKeyOf(r: RecordRow): TriageKey {
  return {
    status: r.status as RemediationStatus,
    falsePositive: r.disposition === 'false_positive',
    exception: r.exception_reason === null ? '' : (r.exception_expiry ?? 'never'),
    due: r.due_date ?? '',
  };
}

export const sameTriage = (a: TriageKey, b: TriageKey) =>
  a.status === b.status && a.falsePositive === b.falsePositive && a.exception === b.exception && a.due === b.due;

/** Whether a finding whose record stands at `k` is one of its session's due counts (migration 0043). */
export const countsAsDue = (k: TriageKey): boolean => k.status !== 'resolved' && !k.falsePositive && k.due !== '';

/** A record's triage changed: the sessions that hold the finding count it elsewhere now. */
export interface TriageChange {
  fingerprint: string;
  before: TriageKey;
  after: TriageKey;
}

/** Most severe highest, unknown below info (the sort key of the findings tables). */
export const severityKeyOf = (s: string | null): number => {
  const i = SEVERITIES.indexOf(s as Severity);
  return i === -1 ? -1 : SEVERITIES.length - 1 - i;
};

/** The severity a key stands for; null below info (an unknown severity). */
export const severityOfKey = (k: number): Severity | null => SEVERITIES[SEVERITIES.length - 1 - k] ?? null;

export const severityOrNull = (s: string | null): Severity | null =>
  (SEVERITIES as readonly string[]).includes(s ?? '') ? (s as Severity) : null;

/** Due from the first sighting, or from the last reopening: a finding that came back is due afresh. */
export function dueDateOfRecord(r: RecordRow, days: DueDays): string | null {
  return dueDateOf(r.reopened_at ?? r.first_seen_at, severityOrNull(r.severity), days);
}

/** An exception in effect on `day`: its expiry day (the last valid one) not passed. */
export const exceptionHolds = (r: Pick<RecordRow, 'exception_reason' | 'exception_expiry'>, day: string) =>
  r.exception_reason !== null && (r.exception_expiry === null || r.exception_expiry >= day);

/**
 * Overdue: open, not a false positive, no exception in effect, past its due date. A deferred
 * finding can be overdue: deferring is not accepting the risk.
 */
export function isOverdue(r: RecordRow, day: string): boolean {
  return (
    r.status !== 'resolved' &&
    r.disposition === null &&
    !exceptionHolds(r, day) &&
    r.due_date !== null &&
    r.due_date < day
  );
}

/** The decision columns of a record nobody has decided anything about yet. */
export const NO_DECISIONS = {
  note: '',
  note_source: null,
  note_by: null,
  note_at: null,
  exception_reason: null,
  exception_approver: null,
  exception_approved_at: null,
  exception_expiry: null,
  exception_source: null,
  exception_claimed_approver: null,
  exception_at: null,
  disposition: null,
  disposition_reason: null,
  disposition_by: null,
  disposition_at: null,
  disposition_source: null,
} as const satisfies Partial<RecordRow>;

/** Records keep the sessions they were seen in, newest first, up to this many (seen_count counts them all). */
export const SEEN_IN_KEPT = 50;

/** The time a scanner session id names (YYYYMMDD_HHMMSS, UTC), or null. */
export function sessionIdTime(id: string): Date | null {
  const m = /^(\d{4})(\d{2})(\d{2})_(\d{2})(\d{2})(\d{2})$/.exec(id);
  if (m === null) return null;
  const d = new Date(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.000Z`);
  return Number.isNaN(d.getTime()) ? null : d;
}
