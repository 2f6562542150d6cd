import {
  NO_CLIENT,
  type DecisionSource,
  type Disposition,
  type LatestStateEntry,
  type LatestStateResponse,
  type RemediationStatus,
  type Severity,
} from '@svc/protocol';
import { scopeOf, type Principal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { DomainError } from '../domain/errors.ts';
import { exceptionHolds, type RecordRow } from '../records/model.ts';
import { recordsOfTarget, targetRow } from '../records/queries.ts';
import { sessionNotFound } from './access.ts';
import { clientIdOut } from './present.ts';
import { findSession } from './queries.ts';
import { recordTarget } from './records-merge.ts';
import { ensureSeeded } from './records-seed.ts';

/**
 * The latest state of a target for the next scan (docs/findings-of-record.md#the-next-scan): the
 * findings of record of the client's target, whatever the sessions that saw them became.
 */

/** The one client the request is about: the key's own, the one named (within scope), or the single one in scope. */
function clientOf(caller: Principal, named: string | undefined): string {
  const scope = scopeOf(caller);
  if (named !== undefined) {
    if (scope !== null && !scope.includes(named)) throw sessionNotFound();
    return named;
  }
  if (scope !== null && scope.length === 1) return scope[0]!;
  if (scope !== null && scope.length === 0) throw sessionNotFound();
  throw new DomainError('invalid.client_id', 'Missing client_id parameter: name the client whose target is asked for');
}

export function parseTarget(value: unknown): string {
  const target = typeof value === 'string' ? value.trim() : '';
  if (target === '') throw new DomainError('invalid.target', 'Missing target parameter');
  return target;
}

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

/** A finding of record as the next scan needs it (the documented remediation fields plus what the records add). */
export function latestStateEntry(r: RecordRow, day: string): LatestStateEntry {
  const hasException = r.exception_reason !== null && r.status !== 'resolved';
  return {
    fingerprint: r.fingerprint,
    title: r.title,
    host: r.host,
    port: r.port,
    protocol: r.protocol,
    severity: r.severity as Severity | null,
    status: r.status as RemediationStatus,
    status_changed: iso(r.status_changed),
    note: r.note,
    first_seen: r.first_seen,
    prior_status: r.prior_status as RemediationStatus | null,
    exception_status: !hasException ? null : exceptionHolds(r, day) ? 'accepted' : 'expired',
    exception_reason: hasException ? r.exception_reason : null,
    exception_approver: hasException ? r.exception_approver : null,
    exception_approved_at: hasException ? iso(r.exception_approved_at) : null,
    exception_expiry: hasException ? r.exception_expiry : null,
    exception_source: hasException ? (r.exception_source as DecisionSource | null) : null,
    exception_claimed_approver: hasException ? r.exception_claimed_approver : null,
    status_source: r.status_source as DecisionSource,
    disposition: r.disposition as Disposition | null,
    disposition_reason: r.disposition_reason,
    disposition_by: r.disposition_by,
    disposition_at: iso(r.disposition_at),
    last_seen: r.last_seen,
    resolved_at: iso(r.resolved_at),
    reopened_at: iso(r.reopened_at),
  };
}

/**
 * The findings of record of a client's target, for the next scan: the open ones (seen in the
 * latest session or not) and the resolved ones, with the latest merged session's id and scan
 * time. 404 when the target has no records (never uploaded, or purged) or the client is out of
 * the caller's scope. The records outlive the sessions: after retention removed every session
 * of the target, the answer is the same (`session_stored` false).
 */
export async function latestState(
  ctx: AppContext,
  caller: Principal,
  target: string,
  clientId: string | undefined,
): Promise<LatestStateResponse> {
  const client = clientOf(caller, clientId ?? (caller.kind === 'legacy' ? NO_CLIENT : undefined));
  const t = { clientId: client, target: recordTarget(target) };
  await ensureSeeded(ctx, t.clientId, t.target);
  const row = await targetRow(ctx.db, t);
  if (row === undefined || row.last_session_id === null)
    throw new DomainError('not_found.session', 'No session of this target');
  const [records, stored] = await Promise.all([
    recordsOfTarget(ctx.db, t),
    findSession(ctx.db, { clientId: client, sessionId: row.last_session_id }),
  ]);
  const day = ctx.now().toISOString().slice(0, 10);
  const all = [...records.values()].sort(
    (a, b) => a.first_seen_at.getTime() - b.first_seen_at.getTime() || (a.fingerprint < b.fingerprint ? -1 : 1),
  );
  return {
    session_id: row.last_session_id,
    client_id: clientIdOut(client),
    target: stored?.target ?? target,
    uploaded_at: (stored?.uploaded_at ?? row.updated_at).toISOString(),
    scanned_at: iso(row.last_scanned_at),
    session_stored: stored !== undefined,
    remediation: all.filter((r) => r.status !== 'resolved').map((r) => latestStateEntry(r, day)),
    remediation_resolved: all.filter((r) => r.status === 'resolved').map((r) => latestStateEntry(r, day)),
  };
}
