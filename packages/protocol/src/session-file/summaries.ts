import {
  REMEDIATION_STATUSES,
  SEVERITIES,
  type ComplianceSummary,
  type ExceptionSummary,
  type Orc964Summary,
  type RemediationSummary,
} from '../sessions.ts';
import { frameworkControlTotal, isFrameworkControl, ORC_964_TECHNICAL_DIVISIONS } from './frameworks.ts';
import { arr, isObj, num, objs, str, type Obj } from './read.ts';
import { emptyBySeverity, severityOf } from './score.ts';

/**
 * The summary blocks derived from a session file's detail blocks (docs/session-file.md#computed-blocks):
 * remediation_summary, exception_summary, compliance_summary and orc964_summary. They read
 * leniently (read.ts): an entry that is not an object is skipped, a field of the wrong type
 * counts as absent. docs/session-file.md states each rule.
 */

/** Over the open items and the items of the prior session no longer detected. */
export function remediationSummaryOf(remediation: unknown, resolved: unknown): RemediationSummary {
  const by_status = { new: 0, persistent: 0, in_progress: 0, resolved: 0, deferred: 0 };
  const by_severity = emptyBySeverity();
  const open = objs(remediation);
  const done = objs(resolved);
  for (const item of [...open, ...done.map((d): Obj => ({ ...d, status: 'resolved' }))]) {
    const status =
      typeof item['status'] === 'string' && (REMEDIATION_STATUSES as readonly string[]).includes(item['status'])
        ? (item['status'] as keyof typeof by_status)
        : 'new';
    by_status[status]++;
    const sev = severityOf(item['severity']);
    if (sev) by_severity[sev]++;
  }
  return { total: open.length + done.length, resolved_count: by_status.resolved, by_status, by_severity };
}

/** Remediation_summary is defaulted at read time when absent. */
export function defaultRemediationSummary(): RemediationSummary {
  return remediationSummaryOf([], []);
}

/**
 * A remediation_summary a file carries itself (files without the remediation arrays): every
 * number of the wrong type counts as absent (0), so the result always has the documented shape.
 */
export function normalizedRemediationSummary(v: unknown): RemediationSummary {
  const out = defaultRemediationSummary();
  const o = isObj(v) ? v : {};
  const byStatus = isObj(o['by_status']) ? o['by_status'] : {};
  const bySeverity = isObj(o['by_severity']) ? o['by_severity'] : {};
  for (const s of REMEDIATION_STATUSES) out.by_status[s] = num(byStatus[s]) ?? 0;
  for (const s of SEVERITIES) out.by_severity[s] = num(bySeverity[s]) ?? 0;
  out.total = num(o['total']) ?? Object.values(out.by_status).reduce((a, b) => a + b, 0);
  out.resolved_count = num(o['resolved_count']) ?? out.by_status.resolved;
  return out;
}

/**
 * Open remediation entries by exception_status (resolved entries carry no live exception;
 * false positives count apart, triage.ts).
 */
export function exceptionCountsOf(remediation: unknown): Pick<ExceptionSummary, 'total_exceptions' | 'by_status'> {
  let accepted = 0;
  let expired = 0;
  for (const item of objs(remediation)) {
    if (item['disposition'] === 'false_positive') continue;
    if (item['exception_status'] === 'accepted') accepted++;
    else if (item['exception_status'] === 'expired') expired++;
  }
  return { total_exceptions: accepted + expired, by_status: { accepted, expired } };
}

/** The exception counts plus the dual scoring the file states (summary first, then metadata). */
export function exceptionSummaryOf(doc: unknown): ExceptionSummary {
  const d = isObj(doc) ? doc : {};
  const metadata = isObj(d['metadata']) ? d['metadata'] : {};
  const summary = isObj(d['summary']) ? d['summary'] : {};
  const impact = isObj(summary['exception_impact']) ? summary['exception_impact'] : {};
  return {
    ...exceptionCountsOf(d['remediation']),
    score_delta: num(impact['score_delta']) ?? 0,
    risk_score_operational: num(summary['risk_score_operational']) ?? num(metadata['risk_score_operational']),
    risk_grade_operational: str(summary['risk_grade_operational']) ?? str(metadata['risk_grade_operational']),
  };
}

/** Bounds of compliance_summary: it appears in every listing, so a crafted file cannot bloat it. */
export const MAX_FRAMEWORK_NAME_LENGTH = 128;
export const MAX_FRAMEWORKS = 50;

/**
 * One row per framework in order of first appearance; totals and gaps for the frameworks
 * only. For those, mapped_controls counts only ids of the framework's list (frameworks.ts), so
 * an id in another unit or edition (a CSF 1.1 id in a file written before the lists were
 * aligned) neither inflates the count nor hides a gap; its findings still count.
 */
export function complianceSummaryOf(compliance: unknown): ComplianceSummary {
  const frameworks = new Map<string, { controls: Set<string>; findings: Set<string> }>();
  const entries = objs(compliance);
  for (const e of entries) {
    const framework = str(e['framework']);
    if (
      framework === null ||
      framework.length > MAX_FRAMEWORK_NAME_LENGTH ||
      (!frameworks.has(framework) && frameworks.size >= MAX_FRAMEWORKS)
    )
      continue;
    const f = frameworks.get(framework) ?? { controls: new Set(), findings: new Set() };
    const control = str(e['control_id']);
    if (control !== null && (frameworkControlTotal(framework) === null || isFrameworkControl(framework, control)))
      f.controls.add(control);
    for (const id of arr(e['finding_ids']))
      if (typeof id === 'string' || typeof id === 'number') f.findings.add(String(id));
    frameworks.set(framework, f);
  }
  return {
    total_mappings: entries.length,
    by_framework: [...frameworks].map(([framework, f]) => {
      const total = frameworkControlTotal(framework);
      return {
        framework,
        mapped_controls: f.controls.size,
        total_controls: total,
        gap_controls: total === null ? null : total - f.controls.size,
        findings_count: f.findings.size,
      };
    }),
  };
}

/** Null when the file has no orc_964 block (ORC 9.64 not enabled or not licensed). */
export function orc964SummaryOf(orc: unknown): Orc964Summary | null {
  if (!isObj(orc)) return null;
  const coverage = isObj(orc['coverage']) ? orc['coverage'] : {};
  const divisions = objs(orc['divisions']);
  const covered = num(coverage['technical_divisions_covered']) ?? divisions.filter((d) => d['mapped'] === true).length;
  return {
    enabled: true,
    technical_covered: covered,
    technical_total: ORC_964_TECHNICAL_DIVISIONS,
    attest_pending: objs(orc['attestations']).filter((a) => a['state'] !== 'true' && a['state'] !== true).length,
  };
}
