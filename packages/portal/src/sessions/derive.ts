import {
  complianceSummaryOf,
  defaultRemediationSummary,
  emptyBySeverity,
  exceptionSummaryOf,
  lenient,
  normalizedRemediationSummary,
  orc964SummaryOf,
  remediationSummaryOf,
  sessionIdOfFile,
  MAX_SESSION_ID_LENGTH,
  SESSION_ID_PATTERN,
  SEVERITIES,
  severityCounts,
  storable,
  type AlertsSummary,
  type BySeverity,
  type SessionMetadata,
} from '@svc/protocol';
import { DomainError } from '../domain/errors.ts';

/**
 * Derive the portal's metadata from an uploaded session file. Scanner formats change
 * over time (docs/api.md#compatibility): older files lack most blocks, newer ones may carry
 * fields we do not know. So every field is optional and a field of the wrong type counts
 * as absent; only the session id is required. The shared rules (summaries, framework
 * totals, lenient reading) live in the protocol package (packages/protocol/src/session-file);
 * this module keeps the portal's reading rules: which source field wins and the defaults.
 * docs/session-file.md describes the format.
 */

const { isObj, str, num, arr, objs } = lenient;
type Obj = lenient.Obj;

/**
 * PostgreSQL cannot store NUL in text or jsonb, nor a lone UTF-16 surrogate in jsonb; such
 * a string in a file would fail the whole upload, so it counts as absent like any other
 * value it cannot use (the protocol's lenient reading applies the same rule).
 */
export { storable };
/** Re-exported for the portal modules that import them from here; defined once in the protocol. */
export { defaultRemediationSummary, remediationSummaryOf };

/** An uploaded file the portal cannot take (no usable session id, not an object): the upload's 400. */
export class SessionFileError extends DomainError {
  constructor(message: string) {
    super('invalid.session_file', message);
    this.name = 'SessionFileError';
  }
}

/** The session id of a file (the protocol's rule, session-file/identify.ts), or the upload's 400 in the contract's words. */
export function sessionIdOf(doc: unknown): string {
  const read = sessionIdOfFile(doc);
  if (!('reason' in read)) return read.id;
  switch (read.reason) {
    case 'not_object':
      throw new SessionFileError('session_json must be a JSON object');
    case 'invalid_session_id':
      throw new SessionFileError(
        `Invalid session id: must match ${SESSION_ID_PATTERN} (at most ${MAX_SESSION_ID_LENGTH} characters)`,
      );
    default:
      throw new SessionFileError('session_json has no metadata.session_id');
  }
}

const strings = (v: unknown): string[] => arr(v).filter((x): x is string => typeof x === 'string' && storable(x));
const bool = (v: unknown): boolean | null => (typeof v === 'boolean' ? v : null);

/**
 * Only the documented fields (docs/session-file.md#computed-blocks), each of its type or null: the
 * metadata is shown in every listing, so whatever else a file carries in this block stays
 * in the stored file only (docs/api.md#compatibility: newer data is lost silently).
 */
function alertsSummaryOf(doc: Obj, metadata: Obj): AlertsSummary | null {
  const a = isObj(doc['alerts_summary'])
    ? doc['alerts_summary']
    : isObj(metadata['alerts_summary'])
      ? metadata['alerts_summary']
      : null;
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
  const counts = isObj(summary['severity_counts'])
    ? summary['severity_counts']
    : isObj(summary['by_severity'])
      ? summary['by_severity']
      : null;
  if (counts === null) return severityCounts(findings);
  const out = emptyBySeverity();
  for (const s of SEVERITIES) out[s] = num(counts[s]) ?? 0;
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
    exception_summary: exceptionSummaryOf(d),
    compliance_summary: complianceSummaryOf(d['compliance']),
    orc964_summary: orc964SummaryOf(d['orc_964']),
    alerts_summary: alertsSummaryOf(d, metadata),
    schedule_id: str(metadata['schedule_id']),
    schedule_cron: str(metadata['schedule_cron']),
    schedule_profile: str(metadata['schedule_profile']),
    is_scheduled: metadata['is_scheduled'] === true,
    scheduled_by: str(metadata['scheduled_by']),
  };
}
