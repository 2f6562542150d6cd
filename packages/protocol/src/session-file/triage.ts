import {
  type ExceptionSummary,
  REMEDIATION_STATUSES,
  type RemediationStatus,
  type RemediationSummary,
  type Severity,
} from '../sessions.ts';
import { isObj, objs, str } from './read.ts';
import { type DualScore, dualScore, emptyBySeverity, type ScoredFields, scoringSeverity, severityOf } from './score.ts';

/**
 * The triage of a session's findings and every number derived from it (docs/session-file.md#triage):
 * remediation_summary, exception_summary, the dual scoring and the false-positive count, from
 * one list of facts. The scanner derives them from its remediation entries at scan time; the
 * portal from its findings of record, whenever a session is read; both with these functions,
 * so the listing, a downloaded file, an export and the share page state the same numbers.
 */

/** One group of equal entries: `n` entries alike in what the numbers read. */
export interface TriageFact {
  status: RemediationStatus;
  /**
   * A finding of this session (its scan reported it), whatever its status since; false for an
   * entry of an earlier finding this session no longer found. Only findings of the session score.
   */
  inScan: boolean;
  /** The entry's own severity (remediation_summary.by_severity). */
  severity: Severity | null;
  /** The severity it scores as (KEV and EPSS raise it, score.ts). */
  scoreSeverity: Severity | null;
  /** Its risk exception: the last valid day (null: never expires) and whether it is marked expired. */
  exception: { expiry: string | null; expired: boolean } | null;
  falsePositive: boolean;
  n: number;
}

/** An exception that holds on `day` (YYYY-MM-DD): not marked expired, its expiry day not passed. */
export function exceptionHolds(exception: TriageFact['exception'], day: string): boolean {
  return exception !== null && !exception.expired && (exception.expiry === null || exception.expiry >= day);
}

export interface DispositionSummary {
  /** Open findings marked as false positives: left out of both scores, counted apart from accepted risk. */
  false_positive: number;
}

export interface TriageSummary {
  scores: DualScore;
  remediation_summary: RemediationSummary;
  exception_summary: ExceptionSummary;
  disposition_summary: DispositionSummary;
}

/**
 * Every triage number of a session on `day`:
 * - remediation_summary over all entries, open and resolved (the documented block);
 * - the actual score over the session's findings that are not false positives: what its scan
 *   found, whatever their status since (a status is a plan or a claim about now; the scan is the
 *   evidence of then); the operational score without those under an exception that holds today;
 * - exception_summary over the open findings that are not false positives: accepted (holds
 *   today) and expired;
 * - the false positives among the session's findings.
 * Only a false positive and an exception, decisions on what a finding is and what risk is
 * accepted, ever change a session's scores.
 */
export function triageSummary(facts: Iterable<TriageFact>, day: string): TriageSummary {
  const byStatus = { new: 0, persistent: 0, in_progress: 0, resolved: 0, deferred: 0 };
  const bySeverity = emptyBySeverity();
  const counts = emptyBySeverity();
  const excepted = emptyBySeverity();
  let total = 0;
  let accepted = 0;
  let expired = 0;
  let falsePositive = 0;
  for (const f of facts) {
    total += f.n;
    byStatus[f.status] += f.n;
    if (f.severity !== null) bySeverity[f.severity] += f.n;
    if (!f.inScan) continue;
    if (f.falsePositive) {
      falsePositive += f.n;
      continue;
    }
    // Resolved entries carry no live exception.
    const exception = f.status === 'resolved' ? null : f.exception;
    const holds = exceptionHolds(exception, day);
    if (exception !== null) {
      if (holds) accepted += f.n;
      else expired += f.n;
    }
    if (f.scoreSeverity === null) continue;
    counts[f.scoreSeverity] += f.n;
    if (holds) excepted[f.scoreSeverity] += f.n;
  }
  const scores = dualScore(counts, excepted);
  return {
    scores,
    remediation_summary: {
      total,
      resolved_count: byStatus.resolved,
      by_status: byStatus,
      by_severity: bySeverity,
    },
    exception_summary: {
      total_exceptions: accepted + expired,
      by_status: { accepted, expired },
      score_delta: scores.exception_impact.score_delta,
      risk_score_operational: scores.risk_score_operational,
      risk_grade_operational: scores.risk_grade_operational,
    },
    disposition_summary: { false_positive: falsePositive },
  };
}

const statusOf = (v: unknown): RemediationStatus =>
  typeof v === 'string' && (REMEDIATION_STATUSES as readonly string[]).includes(v) ? (v as RemediationStatus) : 'new';

/** Whether a remediation entry is marked as a false positive. */
export function isFalsePositive(entry: { disposition?: unknown }): boolean {
  return entry.disposition === 'false_positive';
}

/** The exception of a remediation entry as a fact: accepted or expired, with its expiry day. */
function exceptionOfEntry(e: Record<string, unknown>): TriageFact['exception'] {
  if (e['exception_status'] !== 'accepted' && e['exception_status'] !== 'expired') return null;
  return {
    expiry: str(e['exception_expiry']),
    expired: e['exception_status'] === 'expired' || e['exception_expired'] === true,
  };
}

/**
 * The facts of a file's remediation entries: `.remediation[]` as they say, `.remediation_resolved[]`
 * as resolved. An entry is a finding of the session when it is open, or when it names a finding
 * of the file (`finding_id`: a finding resolved since the scan); `findingIds` are the file's.
 */
export function factsOfEntries(
  remediation: unknown,
  resolved: unknown,
  findingIds: ReadonlySet<string> = new Set(),
): TriageFact[] {
  const fact = (e: Record<string, unknown>, status: RemediationStatus, inScan: boolean): TriageFact => ({
    status,
    inScan,
    severity: severityOf(e['severity']),
    scoreSeverity: scoringSeverity(e as ScoredFields),
    exception: status === 'resolved' ? null : exceptionOfEntry(e),
    falsePositive: isFalsePositive(e),
    n: 1,
  });
  const ofFile = (e: Record<string, unknown>) => {
    const id = str(e['finding_id']);
    return id !== null && findingIds.has(id);
  };
  return [
    ...objs(remediation).map((e) => fact(e, statusOf(e['status']), true)),
    ...objs(resolved).map((e) => fact(e, 'resolved', ofFile(e))),
  ];
}

/** The triage numbers a session file's remediation entries give on `day`. */
export function triageSummaryOfDoc(doc: unknown, day: string): TriageSummary {
  const d = isObj(doc) ? doc : {};
  const ids = new Set(
    objs(d['findings'])
      .map((f) => str(f['id']))
      .filter((id): id is string => id !== null),
  );
  return triageSummary(factsOfEntries(d['remediation'], d['remediation_resolved'], ids), day);
}
