import {
  dualScore,
  dualScoreOf,
  emptyBySeverity,
  exceptionCountsOf,
  scoringCounts,
  severityCounts,
  type BySeverity,
  type ExceptionSummary,
} from '@svc/protocol';
import { hostOf, type HostInfo, type Remediation, type StageFinding } from './types.ts';

/**
 * The `.summary` block (risk score and grade, totals, dual scoring) and the exception counts
 * of metadata.exception_summary, by the protocol's rules (score.ts, summaries.ts). Without
 * remediation items (the remediation gate closed) nothing is excepted: both scores are equal.
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
  exception_summary: Pick<ExceptionSummary, 'total_exceptions' | 'by_status' | 'score_delta'>;
}

export function scoreSession(
  findings: readonly StageFinding[],
  hosts: readonly HostInfo[],
  remediation: readonly Remediation[] | null,
  day: string,
): ScoringResult {
  const counts = severityCounts(findings);
  const scores =
    remediation === null ? dualScore(scoringCounts(findings), emptyBySeverity()) : dualScoreOf(remediation, day);
  const hostSet = new Set([...hosts.map((h) => h.ip), ...findings.map(hostOf).filter((h) => h !== null)]);
  return {
    summary: { ...scores, total_findings: findings.length, total_hosts: hostSet.size, severity_counts: counts },
    exception_summary: { ...exceptionCountsOf(remediation ?? []), score_delta: scores.exception_impact.score_delta },
  };
}
