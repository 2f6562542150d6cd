import {
  type BySeverity,
  type DispositionSummary,
  dualScore,
  emptyBySeverity,
  type ExceptionSummary,
  factsOfEntries,
  type RemediationSummary,
  scoringCounts,
  severityCounts,
  triageSummary,
} from '@svc/protocol';
import { hostOf, type HostInfo, type Remediation, type StageFinding } from './types.ts';

/**
 * The `.summary` block (risk score and grade, totals, dual scoring) and the triage numbers of
 * metadata (remediation_summary, exception_summary, disposition_summary), all by the protocol's
 * one rule (triage.ts), so the scanner and the portal state the same numbers for a session.
 * Only this session's entries count: remediation_not_checked[] stays out, as the portal reads
 * the file. Without remediation items (the remediation gate closed) nothing is excepted: both
 * scores are equal and there are no remediation or disposition numbers.
 */

export interface SummaryBlock {
  risk_score: number;
  risk_grade: string;
  total_findings: number;
  total_hosts: number;
  severity_counts: BySeverity;
  risk_score_operational: number;
  risk_grade_operational: string;
  exception_impact: { excepted_count: number; score_delta: number; excepted_findings: BySeverity };
}

export interface ScoringResult {
  summary: SummaryBlock;
  exception_summary: ExceptionSummary;
  remediation_summary: RemediationSummary | null;
  disposition_summary: DispositionSummary | null;
}

/** The triage of the tracked entries: open (`remediation`) and resolved. */
export interface Tracked {
  remediation: readonly Remediation[];
  remediation_resolved: readonly Remediation[];
}

export function scoreSession(
  findings: readonly StageFinding[],
  hosts: readonly HostInfo[],
  tracked: Tracked | null,
  day: string,
): ScoringResult {
  const counts = severityCounts(findings);
  const hostSet = new Set([...hosts.map((h) => h.ip), ...findings.map(hostOf).filter((h) => h !== null)]);
  const totals = { total_findings: findings.length, total_hosts: hostSet.size, severity_counts: counts };
  if (tracked === null) {
    const scores = dualScore(scoringCounts(findings), emptyBySeverity());
    return {
      summary: { ...scores, ...totals },
      exception_summary: {
        total_exceptions: 0,
        by_status: { accepted: 0, expired: 0 },
        score_delta: 0,
        risk_score_operational: scores.risk_score_operational,
        risk_grade_operational: scores.risk_grade_operational,
      },
      remediation_summary: null,
      disposition_summary: null,
    };
  }
  const t = triageSummary(factsOfEntries(tracked.remediation, tracked.remediation_resolved), day);
  return {
    summary: { ...t.scores, ...totals },
    exception_summary: t.exception_summary,
    remediation_summary: t.remediation_summary,
    disposition_summary: t.disposition_summary,
  };
}
