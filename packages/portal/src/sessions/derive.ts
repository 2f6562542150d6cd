import {
  REMEDIATION_STATUSES,
  SESSION_ID_PATTERN,
  SEVERITIES,
  type AlertsSummary,
  type BySeverity,
  type ComplianceSummary,
  type ExceptionSummary,
  type Orc964Summary,
  type RemediationSummary,
  type SessionMetadata,
  type Severity,
} from '@svc/protocol';

/**
 * Derive the portal's metadata from an uploaded session file. Scanner formats change
 * over time (SPEC "Versioning"): older files lack most blocks, newer ones may carry
 * fields we do not know. So every field is optional and a field of the wrong type counts
 * as absent; only the session id is required. docs/session-file.md describes the format.
 */

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
/**
 * PostgreSQL cannot store NUL in text or jsonb, nor a lone UTF-16 surrogate in jsonb; such
 * a string in a file would fail the whole upload, so it counts as absent like any other
 * value it cannot use.
 */
export const storable = (v: string): boolean => !v.includes('\u0000') && v.isWellFormed();
const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' && storable(v) ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const objs = (v: unknown): Obj[] => arr(v).filter(isObj);

const SESSION_ID = new RegExp(SESSION_ID_PATTERN);
export const MAX_SESSION_ID_LENGTH = 128;

export class SessionFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SessionFileError';
  }
}

/** Total controls per framework for gap analysis; ORC 9.64 has five technical divisions (SPEC). */
export const FRAMEWORK_CONTROL_TOTALS: Record<string, number> = {
  'CIS Controls v8': 18,
  'NIST CSF': 6,
  'PCI-DSS v4.0': 12,
  'SOC 2': 5,
  'ORC 9.64': 5,
};

export function emptyBySeverity(): BySeverity {
  return { critical: 0, high: 0, medium: 0, low: 0, info: 0 };
}

function severityOf(v: unknown): Severity | null {
  const s = typeof v === 'string' ? v.toLowerCase() : null;
  return s !== null && (SEVERITIES as readonly string[]).includes(s) ? (s as Severity) : null;
}

/** The session id of a file: `metadata.session_id`, else a top-level `session_id`. */
export function sessionIdOf(doc: unknown): string {
  if (!isObj(doc)) throw new SessionFileError('session_json must be a JSON object');
  // A wrong-typed metadata.session_id counts as absent, like every other field.
  const fromMetadata = isObj(doc['metadata']) ? doc['metadata']['session_id'] : undefined;
  const id = typeof fromMetadata === 'string' && fromMetadata !== '' ? fromMetadata : doc['session_id'];
  if (typeof id !== 'string' || id === '') throw new SessionFileError('session_json has no metadata.session_id');
  if (id.length > MAX_SESSION_ID_LENGTH || !SESSION_ID.test(id)) throw new SessionFileError(`Invalid session id: must match ${SESSION_ID_PATTERN} (at most ${MAX_SESSION_ID_LENGTH} characters)`);
  return id;
}

export function remediationSummaryOf(remediation: unknown, resolved: unknown): RemediationSummary {
  const by_status = { new: 0, persistent: 0, in_progress: 0, resolved: 0, deferred: 0 };
  const by_severity = emptyBySeverity();
  const open = objs(remediation);
  const done = objs(resolved);
  for (const item of [...open, ...done.map((d): Obj => ({ ...d, status: 'resolved' }))]) {
    const status = typeof item['status'] === 'string' && (REMEDIATION_STATUSES as readonly string[]).includes(item['status']) ? (item['status'] as keyof typeof by_status) : 'new';
    by_status[status]++;
    const sev = severityOf(item['severity']);
    if (sev) by_severity[sev]++;
  }
  return { total: open.length + done.length, resolved_count: by_status.resolved, by_status, by_severity };
}

/**
 * A remediation_summary the file carries itself (files without the remediation arrays):
 * every number of the wrong type counts as absent (0), so what is stored always has the
 * documented shape.
 */
function normalizedRemediationSummary(v: Obj): RemediationSummary {
  const out = defaultRemediationSummary();
  const byStatus = isObj(v['by_status']) ? v['by_status'] : {};
  const bySeverity = isObj(v['by_severity']) ? v['by_severity'] : {};
  for (const s of REMEDIATION_STATUSES) out.by_status[s] = num(byStatus[s]) ?? 0;
  for (const s of SEVERITIES) out.by_severity[s] = num(bySeverity[s]) ?? 0;
  out.total = num(v['total']) ?? Object.values(out.by_status).reduce((a, b) => a + b, 0);
  out.resolved_count = num(v['resolved_count']) ?? out.by_status.resolved;
  return out;
}

/** SPEC: remediation_summary is defaulted at read time when absent. */
export function defaultRemediationSummary(): RemediationSummary {
  return remediationSummaryOf([], []);
}

function exceptionSummaryOf(doc: Obj, metadata: Obj, summary: Obj): ExceptionSummary {
  let accepted = 0;
  let expired = 0;
  for (const item of objs(doc['remediation'])) {
    if (item['exception_status'] === 'accepted') accepted++;
    else if (item['exception_status'] === 'expired') expired++;
  }
  const impact = isObj(summary['exception_impact']) ? summary['exception_impact'] : {};
  return {
    total_exceptions: accepted + expired,
    by_status: { accepted, expired },
    score_delta: num(impact['score_delta']) ?? 0,
    risk_score_operational: num(summary['risk_score_operational']) ?? num(metadata['risk_score_operational']),
    risk_grade_operational: str(summary['risk_grade_operational']) ?? str(metadata['risk_grade_operational']),
  };
}

function complianceSummaryOf(doc: Obj): ComplianceSummary {
  const frameworks = new Map<string, { controls: Set<string>; findings: Set<string> }>();
  const entries = objs(doc['compliance']);
  for (const e of entries) {
    const framework = str(e['framework']);
    // Bounded: the summary appears in every listing, so a crafted file cannot bloat it.
    if (framework === null || framework.length > 128 || (!frameworks.has(framework) && frameworks.size >= 50)) continue;
    const f = frameworks.get(framework) ?? { controls: new Set(), findings: new Set() };
    const control = str(e['control_id']);
    if (control !== null) f.controls.add(control);
    for (const id of arr(e['finding_ids'])) if (typeof id === 'string' || typeof id === 'number') f.findings.add(String(id));
    frameworks.set(framework, f);
  }
  return {
    total_mappings: entries.length,
    by_framework: [...frameworks].map(([framework, f]) => {
      const total = FRAMEWORK_CONTROL_TOTALS[framework] ?? null;
      return {
        framework,
        mapped_controls: f.controls.size,
        total_controls: total,
        gap_controls: total === null ? null : Math.max(0, total - f.controls.size),
        findings_count: f.findings.size,
      };
    }),
  };
}

function orc964SummaryOf(doc: Obj): Orc964Summary | null {
  const orc = doc['orc_964'];
  if (!isObj(orc)) return null;
  const coverage = isObj(orc['coverage']) ? orc['coverage'] : {};
  const divisions = objs(orc['divisions']);
  const covered = num(coverage['technical_divisions_covered']) ?? divisions.filter((d) => d['mapped'] === true).length;
  return {
    enabled: true,
    technical_covered: covered,
    technical_total: 5,
    attest_pending: objs(orc['attestations']).filter((a) => a['state'] !== 'true' && a['state'] !== true).length,
  };
}

const strings = (v: unknown): string[] => arr(v).filter((x): x is string => typeof x === 'string' && storable(x));
const bool = (v: unknown): boolean | null => (typeof v === 'boolean' ? v : null);

/**
 * Only the documented fields (SPEC "Summary blocks"), each of its type or null: the
 * metadata is shown in every listing, so whatever else a file carries in this block stays
 * in the stored file only (SPEC "Versioning" 2: newer data is lost silently).
 */
function alertsSummaryOf(doc: Obj, metadata: Obj): AlertsSummary | null {
  const a = isObj(doc['alerts_summary']) ? doc['alerts_summary'] : isObj(metadata['alerts_summary']) ? metadata['alerts_summary'] : null;
  if (a === null) return null;
  const triggered = objs(a['alerts_triggered']).map((t) => ({
    type: str(t['type']),
    timestamp: str(t['timestamp']),
    message: str(t['message']),
    channels_notified: strings(t['channels_notified']),
  }));
  const config = isObj(a['config'])
    ? {
        risk_threshold: num(a['config']['risk_threshold']),
        on_new_critical: bool(a['config']['on_new_critical']),
        on_scan_complete: bool(a['config']['on_scan_complete']),
        channels: strings(a['config']['channels']),
      }
    : null;
  return {
    evaluated_at: str(a['evaluated_at']),
    total_triggered: num(a['total_triggered']) ?? triggered.length,
    alerts_triggered: triggered,
    config,
  };
}

function severitySummaryOf(summary: Obj, findings: Obj[]): BySeverity {
  const counts = isObj(summary['severity_counts']) ? summary['severity_counts'] : isObj(summary['by_severity']) ? summary['by_severity'] : null;
  const out = emptyBySeverity();
  if (counts !== null) {
    for (const s of SEVERITIES) out[s] = num(counts[s]) ?? 0;
    return out;
  }
  for (const f of findings) {
    const s = severityOf(f['severity']);
    if (s) out[s]++;
  }
  return out;
}

function hostCountOf(summary: Obj, doc: Obj, findings: Obj[]): number {
  const explicit = num(summary['total_hosts']);
  if (explicit !== null) return explicit;
  if (Array.isArray(doc['hosts'])) return doc['hosts'].length;
  const hosts = new Set(findings.map((f) => str(f['host']) ?? str(f['ip'])).filter((h) => h !== null));
  return hosts.size;
}

export interface DeriveInput {
  doc: unknown;
  /** client_id from the key; null for the legacy key, which keeps the file's. */
  keyClientId: string | null;
  hasExecSummary: boolean;
}

/** The client a session file names for itself (what the legacy key's upload is stored under), or null. */
export function fileClientId(doc: unknown): string | null {
  const metadata = isObj(doc) && isObj(doc['metadata']) ? doc['metadata'] : {};
  return str(metadata['client_id']);
}

export function deriveMetadata({ doc, keyClientId, hasExecSummary }: DeriveInput): SessionMetadata {
  const sessionId = sessionIdOf(doc);
  const d = doc as Obj;
  const metadata = isObj(d['metadata']) ? d['metadata'] : {};
  const summary = isObj(d['summary']) ? d['summary'] : {};
  const findings = objs(d['findings']);
  const topology = isObj(d['topology']) ? d['topology'] : {};
  const remediation =
    d['remediation'] === undefined && d['remediation_resolved'] === undefined && isObj(metadata['remediation_summary'])
      ? normalizedRemediationSummary(metadata['remediation_summary'])
      : remediationSummaryOf(d['remediation'], d['remediation_resolved']);
  return {
    session_id: sessionId,
    client_id: keyClientId ?? fileClientId(doc),
    client: str(metadata['client']) ?? str(metadata['client_name']),
    target: str(metadata['target']) ?? str(d['target']),
    risk_score: num(summary['risk_score']) ?? num(metadata['risk_score']),
    risk_grade: str(summary['risk_grade']) ?? str(metadata['risk_grade']),
    total_findings: num(summary['total_findings']) ?? findings.length,
    total_hosts: hostCountOf(summary, d, findings),
    severity_summary: severitySummaryOf(summary, findings),
    tool_version: str(metadata['tool_version']) ?? str(metadata['version']),
    has_exec_summary: hasExecSummary,
    has_topology: arr(topology['nodes']).length > 0,
    remediation_summary: remediation,
    exception_summary: exceptionSummaryOf(d, metadata, summary),
    compliance_summary: complianceSummaryOf(d),
    orc964_summary: orc964SummaryOf(d),
    alerts_summary: alertsSummaryOf(d, metadata),
    schedule_id: str(metadata['schedule_id']),
    schedule_cron: str(metadata['schedule_cron']),
    schedule_profile: str(metadata['schedule_profile']),
    is_scheduled: metadata['is_scheduled'] === true,
    scheduled_by: str(metadata['scheduled_by']),
  };
}
