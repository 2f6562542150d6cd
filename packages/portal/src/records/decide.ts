import type { DecisionSource, DueDays, RemediationStatus } from '@svc/protocol';
import { dueDateOfRecord, type HistoryLine, type RecordRow } from './model.ts';

/**
 * The changes a decision makes on a record (pure), each written into the record's history:
 * status, note, risk exception and disposition. Shared by people's changes (triage.ts) and by
 * the claims an upload makes (claims.ts), which differ only in who may make them.
 */

export interface Actor {
  actor: string;
  source: DecisionSource;
  at: Date;
  sessionId: string | null;
}

const line = (
  r: RecordRow,
  a: Actor,
  field: HistoryLine['field'],
  from: string | null,
  to: string | null,
  detail: string | null = null,
): HistoryLine => ({
  fingerprint: r.fingerprint,
  at: a.at,
  actor: a.actor,
  source: a.source,
  session_id: a.sessionId,
  field,
  from_value: from,
  to_value: to,
  detail,
});

export function setStatus(
  r: RecordRow,
  to: RemediationStatus,
  a: Actor,
  history: HistoryLine[],
  detail: string | null = null,
): boolean {
  if (r.status === to) return false;
  history.push(line(r, a, 'status', r.status, to, detail));
  r.prior_status = r.status;
  r.status = to;
  r.status_changed = a.at;
  r.status_source = a.source;
  r.status_by = a.actor;
  if (to === 'resolved') {
    r.resolved_at = a.at;
    r.resolved_in = a.source === 'scan' ? a.sessionId : null;
  }
  return true;
}

export function setNote(r: RecordRow, note: string, a: Actor, history: HistoryLine[]): boolean {
  if (r.note === note) return false;
  history.push(line(r, a, 'note', r.note === '' ? null : r.note, note === '' ? null : note));
  r.note = note;
  r.note_source = a.source;
  r.note_by = a.actor;
  r.note_at = a.at;
  return true;
}

export interface ExceptionDecision {
  reason: string;
  expiry: string | null;
  /** Who approved it: the person, or for an upload the key that uploaded it. */
  approver: string;
  approvedAt: Date;
  /** The approver an uploaded file named (never shown as an approval). */
  claimedApprover: string | null;
}

const describeException = (reason: string, expiry: string | null) => `${reason} (until ${expiry ?? 'no expiry'})`;

/** Sets, changes or (null) withdraws the exception; the last decision is remembered even when withdrawn. */
export function setException(r: RecordRow, to: ExceptionDecision | null, a: Actor, history: HistoryLine[]): boolean {
  const had = r.exception_reason !== null;
  if (to === null) {
    if (!had) return false;
    history.push(
      line(r, a, 'exception', describeException(r.exception_reason!, r.exception_expiry), null, 'withdrawn'),
    );
    r.exception_reason = null;
    r.exception_approver = null;
    r.exception_approved_at = null;
    r.exception_expiry = null;
    r.exception_claimed_approver = null;
  } else {
    if (
      had &&
      r.exception_reason === to.reason &&
      r.exception_expiry === to.expiry &&
      r.exception_approver === to.approver
    )
      return false;
    history.push(
      line(
        r,
        a,
        'exception',
        had ? describeException(r.exception_reason!, r.exception_expiry) : null,
        describeException(to.reason, to.expiry),
        had ? 'changed' : 'accepted',
      ),
    );
    r.exception_reason = to.reason;
    r.exception_approver = to.approver;
    r.exception_approved_at = to.approvedAt;
    r.exception_expiry = to.expiry;
    r.exception_claimed_approver = to.claimedApprover;
  }
  r.exception_source = a.source;
  r.exception_at = a.at;
  return true;
}

/** Marks (reason) or unmarks (null) the record as a false positive. */
export function setFalsePositive(r: RecordRow, reason: string | null, a: Actor, history: HistoryLine[]): boolean {
  if (reason === null) {
    if (r.disposition === null) return false;
    history.push(line(r, a, 'disposition', `false_positive: ${r.disposition_reason ?? ''}`, null, 'withdrawn'));
    r.disposition = null;
    r.disposition_reason = null;
  } else {
    if (r.disposition === 'false_positive' && r.disposition_reason === reason) return false;
    history.push(
      line(
        r,
        a,
        'disposition',
        r.disposition === null ? null : `false_positive: ${r.disposition_reason ?? ''}`,
        `false_positive: ${reason}`,
      ),
    );
    r.disposition = 'false_positive';
    r.disposition_reason = reason;
  }
  r.disposition_by = a.actor;
  r.disposition_at = a.at;
  r.disposition_source = a.source;
  return true;
}

/** Writes a claim an upload made that was not applied, once per distinct claim. */
export function noteUnappliedClaim(
  r: RecordRow,
  field: string,
  claim: string,
  why: string,
  a: Actor,
  history: HistoryLine[],
): void {
  const claims = { ...(r.claims as Record<string, unknown>) };
  if (claims[field] === claim) return;
  claims[field] = claim;
  r.claims = claims;
  history.push(line(r, a, 'claim', null, `${field}: ${claim}`, `not applied: ${why}`));
}

export function refreshDueDate(r: RecordRow, days: DueDays): void {
  r.due_date = dueDateOfRecord(r, days);
}
