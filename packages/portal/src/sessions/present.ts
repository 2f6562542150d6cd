import type { Static } from '@sinclair/typebox';
import {
  SESSION_FILES,
  type SessionDetailResponse,
  type SessionFileName,
  type SessionView,
  type BenchmarkResponse,
  type ShareResponse,
  type UploadResponse,
  type DeleteSessionResponse,
  type RefreshResponse,
  type RemediationUpdateResponse,
  type RevokeShareResponse,
  type RotateShareResponse,
  type SessionStatus,
  type UpdateSessionResponse,
  type TriageSummary,
  NO_CLIENT,
} from '@svc/protocol';
import { type Benchmark, MIN_PEERS } from './benchmark.ts';
import { defaultRemediationSummary } from './derive.ts';
import type { SessionRef, SessionRow } from './queries.ts';
import type { CommitResult, RemediationChange, RemediationOutcome, SessionDetail, SharedTriage } from './results.ts';
import { withTriage } from './triage-view.ts';

/** The client id as the API shows it: null for the namespace of sessions without a client. */
export function clientIdOut(clientId: string): string | null {
  return clientId === NO_CLIENT ? null : clientId;
}

export function shareUrl(baseUrl: string, token: string): string {
  return `${baseUrl}/share/?token=${token}`;
}

/**
 * The listing and detail view of a session, with the numbers of its current triage when it
 * has them (session-triage.ts). The blob keys stay private.
 */
export function presentSession(
  row: SessionRow,
  shareToken: string | null,
  baseUrl: string,
  triage: TriageSummary | null,
): SessionView {
  const m = triage === null ? row.metadata : withTriage(row.metadata, triage);
  return {
    ...m,
    // Remediation_summary is defaulted at read time when absent (rows of older files).
    remediation_summary: m.remediation_summary ?? defaultRemediationSummary(),
    client_id: clientIdOut(row.client_id),
    status: row.status,
    // null while the share link is revoked (until an admin or member rotates it).
    share_url: shareToken === null ? null : shareUrl(baseUrl, shareToken),
    files: Object.entries(row.files).map(([name, f]) => ({
      name: name as SessionFileName,
      size: f.size,
      sha256: f.sha256,
      content_type: f.content_type,
    })),
    uploaded_at: row.uploaded_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    scanned_at: row.scanned_at.toISOString(),
  };
}

/** GET /api/sessions?session=: the session with its status history and notes, oldest first. */
export function presentSessionDetail(detail: SessionDetail, baseUrl: string): Static<typeof SessionDetailResponse> {
  return {
    session: presentSession(detail.row, detail.shareToken, baseUrl, detail.triage),
    status_history: detail.history.map((h) => ({
      from_status: h.from_status,
      to_status: h.to_status,
      changed_by: h.changed_by,
      note: h.note,
      changed_at: h.changed_at.toISOString(),
    })),
    notes: detail.notes.map((n) => ({ author: n.author, note: n.note, created_at: n.created_at.toISOString() })),
  };
}

/** Stored file names of a session, in the order. */
export function fileNamesOf(row: SessionRow): SessionFileName[] {
  return SESSION_FILES.filter((name) => row.files[name] !== undefined);
}

/** docs/api.md#sessions: what a share-token holder sees. No client_id, no blob keys, no other session. */
export function presentShare(row: SessionRow, shared: SharedTriage): ShareResponse {
  const m = row.metadata;
  const scores = shared.summary?.scores;
  return {
    session_id: row.session_id,
    client: row.client,
    target: row.target,
    risk_score: scores?.risk_score ?? row.risk_score,
    risk_grade: scores?.risk_grade ?? row.risk_grade,
    risk_score_operational: scores?.risk_score_operational ?? m.exception_summary.risk_score_operational,
    risk_grade_operational: scores?.risk_grade_operational ?? m.exception_summary.risk_grade_operational,
    triage_as_of: shared.asOf.toISOString(),
    triage_changed_since_report: shared.changedSince?.toISOString() ?? null,
    total_findings: m.total_findings,
    total_hosts: m.total_hosts,
    severity_summary: m.severity_summary,
    uploaded_at: row.uploaded_at.toISOString(),
    expires_at: row.expires_at.toISOString(),
    has_exec_summary: row.files['exec_summary.html'] !== undefined,
    files: fileNamesOf(row),
  };
}

/**
 * The upload's answer: the documented fields with its messages as they were; what the upload did to the
 * findings of record of its target is in `findings` (a re-upload replaces the files and is
 * merged like any upload: no decision is lost).
 */
export function presentUpload(result: CommitResult, baseUrl: string): UploadResponse {
  return {
    success: true as const,
    session_id: result.sessionId,
    share_token: result.shareToken,
    share_url: result.shareToken === null ? null : shareUrl(baseUrl, result.shareToken),
    message: !result.replaced
      ? 'Session uploaded'
      : result.shareToken === null
        ? 'Session replaced; its share link stays revoked until an admin or member makes a new one'
        : 'Session replaced',
    ...(result.findings === null ? {} : { findings: result.findings }),
  };
}

export function presentBenchmark(sessionId: string, benchmark: Benchmark, fetchedAt: Date): BenchmarkResponse {
  return {
    session_id: sessionId,
    sample_size: benchmark.sample_size,
    min_sample_size: MIN_PEERS,
    fetched_at: fetchedAt.toISOString(),
    metrics: benchmark.metrics,
  };
}

export function presentDeleted(sessionId: string): Static<typeof DeleteSessionResponse> {
  return { success: true as const, session_id: sessionId };
}

export function presentStatusChange(
  sessionId: string,
  status: SessionStatus,
  outcome: { previous: SessionStatus; changed: boolean; changedAt: Date },
): Static<typeof UpdateSessionResponse> {
  return {
    success: true as const,
    session_id: sessionId,
    previous_status: outcome.previous,
    status,
    changed: outcome.changed,
    changed_at: outcome.changedAt.toISOString(),
  };
}

export function presentRotatedShare(ref: SessionRef, token: string, baseUrl: string): RotateShareResponse {
  return {
    success: true as const,
    session_id: ref.sessionId,
    client_id: clientIdOut(ref.clientId),
    share_token: token,
    share_url: shareUrl(baseUrl, token),
  };
}

export function presentRevokedShare(ref: SessionRef, revoked: boolean): RevokeShareResponse {
  return { success: true as const, session_id: ref.sessionId, client_id: clientIdOut(ref.clientId), revoked };
}

export function presentRemediationUpdate(
  sessionId: string,
  items: readonly RemediationChange[],
  outcome: RemediationOutcome,
): RemediationUpdateResponse {
  return {
    success: true as const,
    session_id: sessionId,
    changed: outcome.changed,
    remediation_summary: outcome.summary,
    unmatched: outcome.unmatched,
    results: items.map((item, i) => ({
      ...(item.fingerprint === undefined ? { title: item.title ?? '' } : { fingerprint: item.fingerprint }),
      matched: outcome.matched[i] ?? 0,
    })),
  };
}

export function presentRefresh(sessionId: string, file: SessionFileName, previousKey: string | null): RefreshResponse {
  return {
    success: true as const,
    session_id: sessionId,
    file,
    message: previousKey !== null ? `${file} replaced` : `${file} added`,
  };
}
