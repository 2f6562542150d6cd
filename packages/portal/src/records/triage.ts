import type { RemediationStatus } from '@svc/protocol';
import { DomainError } from '../domain/errors.ts';
import { type Actor, setException, setFalsePositive, setNote, setStatus } from './decide.ts';
import type { HistoryLine, RecordRow } from './model.ts';

/**
 * A person's change of a finding of record (pure; docs/findings-of-record.md#who-decides): the
 * console, PATCH /api/remediation-update and the bulk change all come here. People decide:
 * what they set is never overridden by an uploaded file.
 */

export interface PersonChange {
  status?: RemediationStatus | undefined;
  note?: string | undefined;
  /** Accept or change (reason, expiry), or withdraw (null). */
  exception?: { reason: string; expiry: string } | null | undefined;
  /** Mark as a false positive (reason), or unmark (null). */
  falsePositive?: { reason: string } | null | undefined;
}

export interface ChangeOutcome {
  statusChanged: boolean;
  changed: boolean;
  exception: 'accepted' | 'changed' | 'withdrawn' | null;
}

/** Applies the change to the record in place and writes its history; the record is open or resolved as it was asked. */
export function applyPersonChange(r: RecordRow, c: PersonChange, a: Actor, history: HistoryLine[]): ChangeOutcome {
  const had = r.exception_reason !== null;
  const statusChanged = c.status === undefined ? false : setStatus(r, c.status, a, history);
  if (c.exception !== undefined && c.exception !== null && r.status === 'resolved')
    throw new DomainError(
      'invalid.remediation_item',
      `Cannot set an exception on the resolved finding ${r.fingerprint}: exceptions apply to open findings`,
    );
  const noteChanged = c.note === undefined ? false : setNote(r, c.note, a, history);
  const exceptionChanged =
    c.exception === undefined
      ? false
      : setException(
          r,
          c.exception === null
            ? null
            : {
                reason: c.exception.reason,
                expiry: c.exception.expiry,
                approver: a.actor,
                approvedAt: a.at,
                claimedApprover: null,
              },
          a,
          history,
        );
  const fpChanged =
    c.falsePositive === undefined
      ? false
      : setFalsePositive(r, c.falsePositive === null ? null : c.falsePositive.reason, a, history);
  return {
    statusChanged,
    changed: statusChanged || noteChanged || exceptionChanged || fpChanged,
    exception: !exceptionChanged ? null : c.exception === null ? 'withdrawn' : had ? 'changed' : 'accepted',
  };
}
