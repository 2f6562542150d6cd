import { SEVERITIES, type BySeverity, type Severity } from '../sessions.ts';

/**
 * The risk score and grade of a session or a host, and the dual scoring of SPEC "Summary
 * blocks": the actual score over every open finding, the operational score over the findings
 * without an accepted, unexpired risk exception, and their difference (exception_impact).
 */

/** Weight of one finding per severity. */
export const RISK_WEIGHTS: Readonly<Record<Severity, number>> = { critical: 10, high: 5, medium: 2, low: 0.5, info: 0 };
/** The weighted sum at which the score reaches 1 − 1/e (63). */
export const RISK_SCALE = 50;

export function emptyBySeverity(): BySeverity {
  return { critical: 0, high: 0, medium: 0, low: 0, info: 0 };
}

/** 0 to 100: 100 × (1 − e^(−weighted/50)), rounded; it saturates instead of capping. */
export function riskScore(counts: BySeverity): number {
  const weighted = SEVERITIES.reduce((a, s) => a + RISK_WEIGHTS[s] * counts[s], 0);
  return Math.round(100 * (1 - Math.exp(-weighted / RISK_SCALE)));
}

export const RISK_GRADES = ['A', 'B', 'C', 'D', 'F'] as const;
export type RiskGrade = (typeof RISK_GRADES)[number];
/** The lowest score of each grade after A: A < 20 ≤ B < 40 ≤ C < 55 ≤ D < 75 ≤ F. */
export const GRADE_FLOORS: Readonly<Record<Exclude<RiskGrade, 'A'>, number>> = { B: 20, C: 40, D: 55, F: 75 };

export function riskGrade(score: number): RiskGrade {
  if (score < GRADE_FLOORS.B) return 'A';
  if (score < GRADE_FLOORS.C) return 'B';
  if (score < GRADE_FLOORS.D) return 'C';
  if (score < GRADE_FLOORS.F) return 'D';
  return 'F';
}

/** The exception fields of a remediation entry (SPEC "Remediation entries"). */
export interface ExceptionFields {
  exception_status?: unknown;
  exception_expiry?: unknown;
  exception_expired?: unknown;
}

/**
 * An accepted exception that has not expired on `day` (YYYY-MM-DD, the scan's date): the
 * scanner's `exception_expired` flag wins, and an expiry date counts as the last valid day.
 * An accepted exception without an expiry never expires.
 */
export function isActiveException(entry: ExceptionFields, day: string): boolean {
  if (entry.exception_status !== 'accepted' || entry.exception_expired === true) return false;
  return typeof entry.exception_expiry !== 'string' || entry.exception_expiry >= day;
}

export interface DualScore {
  risk_score: number;
  risk_grade: RiskGrade;
  risk_score_operational: number;
  risk_grade_operational: RiskGrade;
  exception_impact: { excepted_count: number; score_delta: number; excepted_findings: BySeverity };
}

/** Both scores from the open findings' counts and the counts of those under an active exception. */
export function dualScore(counts: BySeverity, excepted: BySeverity): DualScore {
  const operationalCounts = emptyBySeverity();
  for (const s of SEVERITIES) operationalCounts[s] = Math.max(0, counts[s] - excepted[s]);
  const risk = riskScore(counts);
  const operational = riskScore(operationalCounts);
  return {
    risk_score: risk,
    risk_grade: riskGrade(risk),
    risk_score_operational: operational,
    risk_grade_operational: riskGrade(operational),
    exception_impact: {
      excepted_count: SEVERITIES.reduce((a, s) => a + excepted[s], 0),
      score_delta: risk - operational,
      excepted_findings: excepted,
    },
  };
}

/**
 * Dual scoring straight from remediation entries (one per open finding, each with its
 * severity): entries without a known severity do not count.
 */
export function dualScoreOf(entries: readonly (ExceptionFields & { severity?: unknown })[], day: string): DualScore {
  const counts = emptyBySeverity();
  const excepted = emptyBySeverity();
  for (const e of entries) {
    const s = severityOf(e.severity);
    if (s === null) continue;
    counts[s]++;
    if (isActiveException(e, day)) excepted[s]++;
  }
  return dualScore(counts, excepted);
}

/** A severity as files write it (case-insensitive); null for anything else. */
export function severityOf(v: unknown): Severity | null {
  const s = typeof v === 'string' ? v.toLowerCase() : null;
  return s !== null && (SEVERITIES as readonly string[]).includes(s) ? (s as Severity) : null;
}

/** Findings per severity; findings without a known severity are not counted. */
export function severityCounts(findings: readonly { severity?: unknown }[]): BySeverity {
  const out = emptyBySeverity();
  for (const f of findings) {
    const s = severityOf(f.severity);
    if (s) out[s]++;
  }
  return out;
}
