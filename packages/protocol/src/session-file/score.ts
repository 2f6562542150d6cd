import { SEVERITIES, type BySeverity, type Severity } from '../sessions.ts';

/**
 * The risk score and grade of a session or a host, and the dual scoring (docs/scoring.md): the actual score over every open finding, the operational score over the findings
 * without an accepted, unexpired risk exception, and their difference (exception_impact).
 * docs/scoring.md gives the formula, its reasons and its references.
 */

/** Weight of one finding per severity (the volume part of the score). */
export const RISK_WEIGHTS: Readonly<Record<Severity, number>> = { critical: 10, high: 5, medium: 2, low: 0.5, info: 0 };
/** The weighted sum that closes 1 − 1/e (63 %) of the distance between the floor and 100. */
export const RISK_SCALE = 50;

export const RISK_GRADES = ['A', 'B', 'C', 'D', 'F'] as const;
export type RiskGrade = (typeof RISK_GRADES)[number];
/**
 * The lowest score of each grade after A: A < 20 ≤ B < 40 ≤ C < 60 ≤ D < 80 ≤ F. D starts at
 * the default alert threshold (ALERT_RISK_THRESHOLD 60), so "D or F" means "alerts by default".
 */
export const GRADE_FLOORS: Readonly<Record<Exclude<RiskGrade, 'A'>, number>> = { B: 20, C: 40, D: 60, F: 80 };

/**
 * The best grade a session can have while a finding of this severity is open (like SSL Labs'
 * grade caps): a critical caps at D, a high or medium at C; only low and info allow A and B.
 */
export const GRADE_CAPS: Readonly<Record<Severity, RiskGrade>> = {
  critical: 'D',
  high: 'C',
  medium: 'C',
  low: 'A',
  info: 'A',
};

/** The lowest score while the severity is the worst open one: the lowest score of its cap. */
export const SEVERITY_FLOORS: Readonly<Record<Severity, number>> = {
  critical: GRADE_FLOORS.D,
  high: GRADE_FLOORS.C,
  medium: GRADE_FLOORS.C,
  low: 0,
  info: 0,
};

export function emptyBySeverity(): BySeverity {
  return { critical: 0, high: 0, medium: 0, low: 0, info: 0 };
}

/** The most severe severity with a count above 0; null when nothing is open. */
export function worstSeverity(counts: BySeverity): Severity | null {
  return SEVERITIES.find((s) => counts[s] > 0) ?? null;
}

/**
 * 0 to 100: 100 − (100 − floor) × e^(−weighted/50), rounded, where floor is the floor of the
 * worst open severity and weighted the sum of the weights of every open finding. The floor
 * bounds the score from below by the worst finding; the weighted sum moves it towards 100
 * with volume. Both only grow when a finding is added, so the score never drops.
 */
export function riskScore(counts: BySeverity): number {
  const worst = worstSeverity(counts);
  const floor = worst === null ? 0 : SEVERITY_FLOORS[worst];
  const weighted = SEVERITIES.reduce((a, s) => a + RISK_WEIGHTS[s] * counts[s], 0);
  return Math.round(100 - (100 - floor) * Math.exp(-weighted / RISK_SCALE));
}

export function riskGrade(score: number): RiskGrade {
  if (score < GRADE_FLOORS.B) return 'A';
  if (score < GRADE_FLOORS.C) return 'B';
  if (score < GRADE_FLOORS.D) return 'C';
  if (score < GRADE_FLOORS.F) return 'D';
  return 'F';
}

/** The exception fields of a remediation entry (docs/session-file.md). */
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

/** EPSS (probability of exploitation in the next 30 days) from which a finding counts one severity higher. */
export const EPSS_RAISE = 0.1;

/** What the score reads of a finding or a remediation entry. */
export interface ScoredFields {
  severity?: unknown;
  kev?: unknown;
  epss?: unknown;
}

/**
 * The severity a finding counts as in the score (docs/scoring.md): a known-exploited one
 * (`kev` true) as critical; one with EPSS of EPSS_RAISE or more one severity higher (info stays
 * info: it states no weakness); any other as its own. Null without a known severity.
 */
export function scoringSeverity(f: ScoredFields): Severity | null {
  const s = severityOf(f.severity);
  if (s === null || s === 'info') return s;
  if (f.kev === true) return 'critical';
  if (typeof f.epss === 'number' && f.epss >= EPSS_RAISE) return SEVERITIES[Math.max(0, SEVERITIES.indexOf(s) - 1)]!;
  return s;
}

/** Findings per scoring severity (scoringSeverity), the counts the score is computed from. */
export function scoringCounts(findings: readonly ScoredFields[]): BySeverity {
  const out = emptyBySeverity();
  for (const f of findings) {
    const s = scoringSeverity(f);
    if (s) out[s]++;
  }
  return out;
}

/**
 * Dual scoring straight from remediation entries (one per open finding, each with its
 * severity, and `kev`/`epss` when the finding had them): entries without a known severity, and
 * false positives, do not count.
 */
export function dualScoreOf(
  entries: readonly (ExceptionFields & ScoredFields & { disposition?: unknown })[],
  day: string,
): DualScore {
  const counts = emptyBySeverity();
  const excepted = emptyBySeverity();
  for (const e of entries) {
    // A false positive is not a weakness: it counts in neither score (triage.ts).
    if (e.disposition === 'false_positive') continue;
    const s = scoringSeverity(e);
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
