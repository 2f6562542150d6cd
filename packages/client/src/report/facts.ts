import {
  type BySeverity,
  complianceSummaryOf,
  emptyBySeverity,
  type Finding,
  GRADE_CAPS,
  RISK_GRADES,
  type RiskGrade,
  riskGrade,
  riskScore as scoreOfCounts,
  SEVERITIES,
  type SessionFile,
  type Severity,
} from '@svc/protocol';

/**
 * What the report reads from a session file, with the lenient defaults of docs/api.md#compatibility:
 * older files put the score in metadata, name the severity counts `by_severity`, and may
 * lack any block. Nothing here formats; sections do.
 */

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : null);

export function severityOf(f: Finding): Severity {
  return (SEVERITIES as readonly unknown[]).includes(f.severity) ? (f.severity as Severity) : 'info';
}

export const SEVERITY_RANK: Readonly<Record<Severity, number>> = { critical: 4, high: 3, medium: 2, low: 1, info: 0 };

export function hostOf(f: Finding): string {
  return str(f.host)?.trim() ?? str(f.ip)?.trim() ?? 'unknown host';
}

export function portLabel(f: Finding): string {
  if (typeof f.port !== 'number') return 'host';
  return `${f.port}/${str(f.protocol) ?? 'tcp'}`;
}

/** CVE ids of a finding: references.cve plus the older single `cve`. */
const NONE: readonly string[] = [];

export function cvesOf(f: Finding): readonly string[] {
  const listed = f.references?.cve;
  const single = typeof f.cve === 'string' && f.cve !== '' ? f.cve : null;
  if (single === null) return listed ?? NONE;
  if (listed === undefined || listed.length === 0) return [single];
  const ids = new Set<string>(f.references?.cve ?? []);
  if (typeof f.cve === 'string' && f.cve !== '') ids.add(f.cve);
  return [...ids];
}

export interface Facts {
  sessionId: string;
  target: string;
  client: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  profile: string | null;
  findings: readonly Finding[];
  counts: BySeverity;
  totalHosts: number;
  riskScore: number;
  riskGrade: string;
  operationalScore: number | null;
  operationalGrade: string | null;
  exceptedCount: number;
  scoreDelta: number;
  /**
   * The score by the current formula when the stored grade is better than the worst open
   * finding allows (a file scored before docs/scoring.md's caps); null otherwise. The stored
   * score is shown as it is: history is not rescored.
   */
  currentScore: { score: number; grade: RiskGrade } | null;
}

export function factsOf(doc: SessionFile): Facts {
  const m = doc.metadata ?? {};
  const s = doc.summary ?? {};
  const findings = Array.isArray(doc.findings) ? doc.findings : [];
  const counts = countsOf(s.severity_counts ?? s.by_severity, findings);
  const riskScore = num(s.risk_score) ?? num(m.risk_score) ?? 0;
  const operationalScore = num(s.risk_score_operational) ?? num(m.risk_score_operational);
  const hosts = new Set(findings.map(hostOf));
  const nodes = doc.topology?.nodes?.length ?? 0;
  const grade = str(s.risk_grade) ?? str(m.risk_grade) ?? riskGrade(riskScore);
  return {
    sessionId: str(m.session_id) ?? str(doc.session_id) ?? '',
    target: str(m.target) ?? str(doc.target) ?? 'unnamed target',
    client: str(m.client) ?? str(m.client_name) ?? str(m.client_id),
    startedAt: str(m.started_at),
    finishedAt: str(m.finished_at),
    profile: str(m.scan_profile),
    findings,
    counts,
    totalHosts: num(s.total_hosts) ?? Math.max(hosts.size, nodes),
    riskScore,
    riskGrade: grade,
    operationalScore,
    operationalGrade:
      str(s.risk_grade_operational) ??
      str(m.risk_grade_operational) ??
      (operationalScore === null ? null : riskGrade(operationalScore)),
    exceptedCount: num(s.exception_impact?.excepted_count) ?? 0,
    scoreDelta: num(s.exception_impact?.score_delta) ?? (operationalScore === null ? 0 : riskScore - operationalScore),
    currentScore: aboveCap(grade, counts),
  };
}

function aboveCap(stored: string, counts: BySeverity): Facts['currentScore'] {
  const worst = SEVERITIES.find((sev) => counts[sev] > 0);
  const rank = RISK_GRADES.indexOf(stored as RiskGrade);
  if (worst === undefined || rank < 0 || rank >= RISK_GRADES.indexOf(GRADE_CAPS[worst])) return null;
  const score = scoreOfCounts(counts);
  return { score, grade: riskGrade(score) };
}

function countsOf(block: unknown, findings: readonly Finding[]): BySeverity {
  const counts = emptyBySeverity();
  if (block !== null && typeof block === 'object') {
    const b = block as Record<string, unknown>;
    if (SEVERITIES.some((sev) => num(b[sev]) !== null)) {
      for (const sev of SEVERITIES) counts[sev] = num(b[sev]) ?? 0;
      return counts;
    }
  }
  for (const f of findings) counts[severityOf(f)]++;
  return counts;
}

/** The highest severity present, or null for a clean scan. */
export function highestSeverity(counts: BySeverity): Severity | null {
  return SEVERITIES.find((s) => s !== 'info' && counts[s] > 0) ?? null;
}

/** Per framework: controls with findings, the framework's total, and findings (derived from compliance[], the source). */
export function complianceRows(doc: SessionFile): ReturnType<typeof complianceSummaryOf>['by_framework'] {
  return complianceSummaryOf(doc.compliance ?? []).by_framework;
}
