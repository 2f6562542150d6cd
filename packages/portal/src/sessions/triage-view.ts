import {
  REMEDIATION_STATUSES,
  type RemediationStatus,
  type SessionMetadata,
  type Severity,
  SEVERITIES,
  type TriageFact,
  type TriageSummary,
  triageSummary,
} from '@svc/protocol';
import type { CountRow } from './triage-counts-queries.ts';

/**
 * A session's numbers as its findings stand now (pure; docs/findings-of-record.md#one-set-of-numbers):
 * the triage counts kept beside the session (triage-counts-queries.ts) read by the protocol's
 * one rule, so the listing, the session view, a downloaded file, the exports and the share page
 * state the same scores and summaries on the same day.
 */

const severity = (s: string): Severity | null =>
  (SEVERITIES as readonly string[]).includes(s) ? (s as Severity) : null;
const status = (s: string): RemediationStatus =>
  (REMEDIATION_STATUSES as readonly string[]).includes(s) ? (s as RemediationStatus) : 'new';

export function factsOfCounts(rows: readonly CountRow[]): TriageFact[] {
  return rows.map((r) => ({
    status: status(r.status),
    inScan: r.in_scan,
    severity: severity(r.severity),
    scoreSeverity: severity(r.score_severity),
    exception:
      r.exception_expiry === ''
        ? null
        : { expiry: r.exception_expiry === 'never' ? null : r.exception_expiry, expired: false },
    falsePositive: r.false_positive,
    n: r.n,
  }));
}

export function summaryOfCounts(rows: readonly CountRow[], day: string): TriageSummary {
  return triageSummary(factsOfCounts(rows), day);
}

/** The metadata of a session with the numbers of its current triage in place of those its file stated. */
export function withTriage(m: SessionMetadata, t: TriageSummary): SessionMetadata {
  return {
    ...m,
    risk_score: t.scores.risk_score,
    risk_grade: t.scores.risk_grade,
    remediation_summary: t.remediation_summary,
    exception_summary: t.exception_summary,
    disposition_summary: t.disposition_summary,
  };
}

/** Counts grouped by session (the key: JSON of client id and session id). */
export function countsBySession(rows: readonly CountRow[]): Map<string, CountRow[]> {
  const out = new Map<string, CountRow[]>();
  for (const r of rows) {
    const k = sessionKey(r.client_id, r.session_id);
    const list = out.get(k);
    if (list === undefined) out.set(k, [r]);
    else list.push(r);
  }
  return out;
}

export const sessionKey = (clientId: string, sessionId: string) => JSON.stringify([clientId, sessionId]);
