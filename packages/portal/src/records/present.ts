import type {
  DecisionSource,
  RecordFinding,
  RemediationStatus,
  Severity,
  TargetChanges,
  TargetView,
} from '@svc/protocol';
import type { TargetChangesRow } from './changes-queries.ts';
import { exceptionHolds, isOverdue, type RecordRow } from './model.ts';

/** The API's shapes of records (docs/findings-of-record.md). No key of the store, nothing of another client. */

const iso = (d: Date | null) => (d === null ? null : d.toISOString());
/** The client id as the API shows it: null for the sessions uploaded without a client. */
const clientOut = (c: string) => (c === '' ? null : c);

export function presentRecord(r: RecordRow, day: string): RecordFinding {
  return {
    client_id: clientOut(r.client_id),
    target: r.target,
    fingerprint: r.fingerprint,
    title: r.title,
    severity: r.severity as Severity | null,
    rule_id: r.rule_id,
    host: r.host,
    port: r.port,
    protocol: r.protocol,
    cve_ids: r.cve_ids,
    kev: r.kev,
    epss: r.epss,
    status: r.status as RemediationStatus,
    status_changed: iso(r.status_changed),
    status_source: r.status_source as DecisionSource,
    status_by: r.status_by,
    note: r.note,
    exception:
      r.exception_reason === null
        ? null
        : {
            state: exceptionHolds(r, day) ? 'accepted' : 'expired',
            reason: r.exception_reason,
            approver: r.exception_approver ?? '',
            approved_at: iso(r.exception_approved_at),
            expiry: r.exception_expiry,
            source: (r.exception_source ?? 'person') as DecisionSource,
            claimed_approver: r.exception_claimed_approver,
          },
    disposition:
      r.disposition === null
        ? null
        : {
            disposition: 'false_positive',
            reason: r.disposition_reason ?? '',
            by: r.disposition_by ?? '',
            at: iso(r.disposition_at) ?? '',
            source: (r.disposition_source ?? 'person') as DecisionSource,
          },
    first_seen: r.first_seen,
    first_seen_at: r.first_seen_at.toISOString(),
    last_seen: r.last_seen,
    last_seen_at: r.last_seen_at.toISOString(),
    resolved_at: iso(r.resolved_at),
    resolved_in: r.resolved_in,
    reopened_at: iso(r.reopened_at),
    not_checked_in: r.not_checked_in,
    due_date: r.due_date,
    overdue: isOverdue(r, day),
    seen_in: r.seen_in,
    seen_count: r.seen_count,
  };
}

export function presentTarget(t: {
  client_id: string;
  target: string;
  last_session_id: string | null;
  last_scanned_at: Date | null;
  last_coverage: Record<string, unknown> | null;
  open: string;
  resolved: string;
}): TargetView {
  return {
    client_id: clientOut(t.client_id),
    target: t.target,
    last_session_id: t.last_session_id,
    last_scanned_at: iso(t.last_scanned_at),
    coverage: t.last_coverage as TargetView['coverage'],
    open: Number(t.open),
    resolved: Number(t.resolved),
  };
}

export function presentTargetChanges(t: TargetChangesRow): TargetChanges {
  return {
    client_id: clientOut(t.client_id),
    target: t.target,
    session_id: t.last_session_id,
    scanned_at: iso(t.last_scanned_at),
    session_stored: t.session_stored,
    previous_session_id: t.previous_session_id,
    previous_scanned_at: iso(t.previous_scanned_at),
    changes: {
      new: Number(t.new),
      persistent: Number(t.persistent),
      reopened: Number(t.reopened),
      resolved: Number(t.resolved),
      not_checked: Number(t.not_checked),
    },
  };
}
