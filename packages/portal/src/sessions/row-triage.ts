import type { DecisionSource, FindingChange, RemediationStatus } from '@svc/protocol';
import type { FindingRecord } from './findings-queries.ts';

/**
 * The triage of one row of a session's findings as it stands now (pure): from its finding of
 * record, or, for a row without one, from what the file's entry said. One reading for the
 * findings API, the served session file and the exports (docs/findings-of-record.md).
 */

export interface RowTriage {
  status: RemediationStatus | null;
  priorStatus: RemediationStatus | null;
  statusChanged: string | null;
  statusSource: DecisionSource | null;
  note: string;
  firstSeen: string | null;
  exception: {
    state: 'accepted' | 'expired';
    reason: string | null;
    approver: string | null;
    approvedAt: string | null;
    expiry: string | null;
    source: DecisionSource | null;
    claimedApprover: string | null;
  } | null;
  disposition: { reason: string; by: string; at: string } | null;
  dueDate: string | null;
  overdue: boolean;
  lastSeen: string | null;
  resolvedAt: string | null;
  reopenedAt: string | null;
  change: FindingChange | null;
  inScan: boolean;
}

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

export function rowTriage(r: FindingRecord, day: string): RowTriage {
  const inScan = r.in_scan;
  const change = r.change as FindingChange | null;
  if (r.r_fingerprint === null) {
    const active =
      r.exception_status === 'accepted' &&
      !r.exception_expired &&
      (r.exception_expiry === null || r.exception_expiry >= day);
    return {
      status: r.status as RemediationStatus | null,
      priorStatus: null,
      statusChanged: r.status_changed,
      statusSource: null,
      note: r.note,
      firstSeen: r.first_seen,
      exception:
        r.exception_status === null
          ? null
          : {
              state: active ? 'accepted' : 'expired',
              reason: r.exception_reason,
              approver: r.exception_approver,
              approvedAt: r.exception_approved_at,
              expiry: r.exception_expiry,
              source: null,
              claimedApprover: null,
            },
      disposition: null,
      dueDate: null,
      overdue: false,
      lastSeen: null,
      resolvedAt: null,
      reopenedAt: null,
      change,
      inScan,
    };
  }
  // A record this session resolved stays resolved here, whatever became of it since.
  const resolvedHere = !inScan && change === 'resolved';
  const status = (resolvedHere ? 'resolved' : r.r_status) as RemediationStatus;
  const hasException = r.r_exception_reason !== null && status !== 'resolved';
  const holds = hasException && (r.r_exception_expiry === null || r.r_exception_expiry >= day);
  const fp = r.r_disposition === 'false_positive';
  return {
    status,
    priorStatus: r.r_prior_status as RemediationStatus | null,
    statusChanged: iso(r.r_status_changed),
    statusSource: r.r_status_source as DecisionSource | null,
    note: r.r_note ?? '',
    firstSeen: r.r_first_seen,
    exception: !hasException
      ? null
      : {
          state: holds ? 'accepted' : 'expired',
          reason: r.r_exception_reason,
          approver: r.r_exception_approver,
          approvedAt: iso(r.r_exception_approved_at),
          expiry: r.r_exception_expiry,
          source: r.r_exception_source as DecisionSource | null,
          claimedApprover: r.r_exception_claimed_approver,
        },
    disposition: fp
      ? { reason: r.r_disposition_reason ?? '', by: r.r_disposition_by ?? '', at: iso(r.r_disposition_at) ?? '' }
      : null,
    dueDate: r.r_due_date,
    overdue: status !== 'resolved' && !fp && !holds && r.r_due_date !== null && r.r_due_date < day,
    lastSeen: r.r_last_seen,
    resolvedAt: iso(r.r_resolved_at),
    reopenedAt: iso(r.r_reopened_at),
    change,
    inScan,
  };
}
