import type { Claims } from './evidence.ts';
import { type Actor, noteUnappliedClaim, setException, setFalsePositive, setNote, setStatus } from './decide.ts';
import type { HistoryLine, RecordRow } from './model.ts';

/**
 * Who decides (docs/findings-of-record.md#who-decides). Statuses, notes, exceptions and
 * dispositions are decisions of people with `remediation:update`, made in the console or the
 * API. What an uploaded file states about them is a claim by the key that uploaded it:
 * - a key without `remediation:update` never changes a decision (so it can never lower the
 *   operational score); its claims are kept in the history;
 * - a decision a person made (or one migrated from before the records) is never overridden by a file;
 * - otherwise a claim of a key with `remediation:update` applies when it is not older than the
 *   decision it replaces (among equal authority the newer wins), shown as set by that key,
 *   never as a person's approval.
 */

export interface Uploader {
  /** The key as audit records it (`license:<id>`, `legacy-key`). */
  actor: string;
  /** Its tier has remediation:update. */
  mayDecide: boolean;
}

const PEOPLE = new Set(['person', 'migration']);

function refusal(
  uploader: Uploader,
  current: { source: string | null; by: string | null; at: Date | null },
  claimAt: Date,
): string | null {
  if (!uploader.mayDecide) return 'the key that uploaded it has no remediation:update permission';
  if (current.source !== null && PEOPLE.has(current.source))
    return `decided in the portal${current.by === null ? '' : ` by ${current.by}`}`;
  if (current.at !== null && claimAt.getTime() < current.at.getTime()) return 'older than the current decision';
  return null;
}

/** Who set a record's status before this upload: the scan's own change in this merge is no decision to weigh a claim against. */
export interface StatusBaseline {
  source: string | null;
  by: string | null;
  at: Date | null;
}

/** Applies the claims of an upload's entry to its record, or records why not. */
export function applyClaims(
  r: RecordRow,
  claims: Claims,
  uploader: Uploader,
  a: Actor,
  history: HistoryLine[],
  baseline: StatusBaseline = { source: r.status_source, by: r.status_by, at: r.status_changed },
): void {
  const scanAt = a.at;
  if (claims.status !== undefined && r.status !== 'resolved' && r.status !== claims.status.value) {
    const at = claims.status.at ?? scanAt;
    const why = refusal(uploader, baseline, at);
    if (why === null) setStatus(r, claims.status.value, { ...a, at }, history);
    else noteUnappliedClaim(r, 'status', claims.status.value, why, a, history);
  }
  if (claims.note !== undefined && claims.note !== r.note) {
    const why = refusal(uploader, { source: r.note_source, by: r.note_by, at: r.note_at }, scanAt);
    if (why === null) setNote(r, claims.note, a, history);
    else noteUnappliedClaim(r, 'note', claims.note, why, a, history);
  }
  const ex = claims.exception;
  if (ex !== undefined && !(r.exception_reason === ex.reason && r.exception_expiry === ex.expiry)) {
    const at = ex.approvedAt ?? scanAt;
    const why = refusal(uploader, { source: r.exception_source, by: r.exception_approver, at: r.exception_at }, at);
    if (why === null)
      setException(
        r,
        {
          reason: ex.reason,
          expiry: ex.expiry,
          approver: uploader.actor,
          approvedAt: at,
          claimedApprover: ex.approver,
        },
        { ...a, at },
        history,
      );
    else
      noteUnappliedClaim(
        r,
        'exception',
        `${ex.reason} (until ${ex.expiry ?? 'no expiry'}, approver named: ${ex.approver ?? 'none'})`,
        why,
        a,
        history,
      );
  }
  const fp = claims.disposition;
  if (fp !== undefined && !(r.disposition === 'false_positive' && r.disposition_reason === fp.reason)) {
    const at = fp.at ?? scanAt;
    const why = refusal(uploader, { source: r.disposition_source, by: r.disposition_by, at: r.disposition_at }, at);
    if (why === null) setFalsePositive(r, fp.reason, { ...a, at }, history);
    else noteUnappliedClaim(r, 'disposition', `false_positive: ${fp.reason}`, why, a, history);
  }
}
