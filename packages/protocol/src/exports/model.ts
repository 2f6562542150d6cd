import { REMEDIATION_STATUSES, type RemediationStatus, SEVERITIES, type Severity } from '../sessions.ts';
import { findingFingerprint } from '../session-file/fingerprint.ts';
import { isFingerprint } from '../session-file/fingerprint-shape.ts';
import { arr, isObj, num, type Obj, str } from '../session-file/read.ts';
import { fingerprintOfFinding, trackerOf } from '../session-file/tracking.ts';
import { httpUrl } from '../web-link.ts';

/**
 * One finding as every export sees it: the session file read leniently (a field of the wrong
 * type counts as absent), with the remediation entry that tracks it (the same rule as the
 * portal's findings index) and a fingerprint always present.
 */
export interface ExportFinding {
  /** findings[].fingerprint, else findingFingerprint(rule_id or title, host or '', port, protocol). */
  fingerprint: string;
  id: string | null;
  rule_id: string;
  title: string;
  severity: Severity | null;
  cvss: number | null;
  kev: boolean | null;
  kev_date_added: string | null;
  epss: number | null;
  epss_percentile: number | null;
  host: string | null;
  hostname: string | null;
  port: number | null;
  protocol: string | null;
  service: string | null;
  /** Every CVE id the finding names (references.cve, then the older single `cve`): upper case, once each. */
  cve: string[];
  /** Every CWE id of references.cwe as `CWE-<n>`, n from 1 to 9,999,999, once each. */
  cwe: string[];
  /** references.urls that are http(s) URLs (httpUrl), normalised; any other scheme is dropped. */
  urls: string[];
  description: string | null;
  remediation: string | null;
  evidence: string | null;
  status: RemediationStatus | null;
  first_seen: string | null;
  /** `accepted` only while the exception is live (as the console shows it); a lapsed one reads `expired`. */
  exception_status: 'accepted' | 'expired' | null;
  exception_reason: string | null;
  exception_approver: string | null;
  exception_expiry: string | null;
  /** `false_positive` when people said it is not real (docs/findings-of-record.md#false-positives). */
  disposition: 'false_positive' | null;
  disposition_reason: string | null;
}

export interface ExportSession {
  session_id: string;
  client_id: string | null;
  target: string | null;
  tool_version: string | null;
  /** YYYY-MM-DD of the scan: finished_at, started_at, else the session id's date. */
  date: string | null;
  /** The session's scores as the file states them (the portal serves them for the current triage). */
  risk_score: number | null;
  risk_grade: string | null;
  risk_score_operational: number | null;
  risk_grade_operational: string | null;
}

export interface ExportOptions {
  /** Absolute address of the session in the console, for links back (the portal passes it). */
  sessionUrl?: string | undefined;
  /** The exporting program's version, when the session names no scanner version. */
  toolVersion?: string | undefined;
  /** Today, YYYY-MM-DD (UTC): an accepted exception whose expiry is before it reads expired. Default: the clock's. */
  today?: string | undefined;
}

const CVE = /^CVE-\d{4}-\d{4,}$/;
const CWE = /^CWE-(\d+)$/;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
/** The largest CWE number DefectDojo stores (`cwe_number` in its dojo/finding/cwe.py); no CWE comes near it. */
const MAX_CWE = 9_999_999;

/** `CWE-<n>` with n from 1 to MAX_CWE, leading zeros dropped (`cwe-079` is `CWE-79`); null otherwise. */
function cweLabel(text: string): string | null {
  const m = CWE.exec(text.toUpperCase());
  const n = m === null ? 0 : Number(m[1]);
  return n >= 1 && n <= MAX_CWE ? `CWE-${n}` : null;
}

const strings = (v: unknown): string[] => arr(v).flatMap((x) => (str(x) === null ? [] : [(x as string).trim()]));
const unique = (v: string[]) => [...new Set(v)];
const unit = (v: unknown): number | null => {
  const n = num(v);
  return n !== null && n >= 0 && n <= 1 ? n : null;
};
const severityOf = (v: unknown): Severity | null => {
  const s = typeof v === 'string' ? v.trim().toLowerCase() : '';
  return (SEVERITIES as readonly string[]).includes(s) ? (s as Severity) : null;
};
const statusOf = (v: unknown): RemediationStatus | null =>
  typeof v === 'string' && (REMEDIATION_STATUSES as readonly string[]).includes(v) ? (v as RemediationStatus) : null;

function dayOf(meta: Obj, sessionId: string): string | null {
  for (const v of [meta['finished_at'], meta['started_at']]) {
    const s = str(v)?.slice(0, 10);
    if (s !== undefined && DAY.test(s)) return s;
  }
  const m = /^(\d{4})(\d{2})(\d{2})_/.exec(sessionId);
  return m === null ? null : `${m[1]}-${m[2]}-${m[3]}`;
}

export function exportSessionOf(doc: unknown): ExportSession {
  const root = isObj(doc) ? doc : {};
  const meta = isObj(root['metadata']) ? root['metadata'] : {};
  const summary = isObj(root['summary']) ? root['summary'] : {};
  const sessionId = str(meta['session_id']) ?? str(root['session_id']) ?? '';
  return {
    session_id: sessionId,
    client_id: str(meta['client_id']),
    target: str(meta['target']) ?? str(root['target']),
    tool_version: str(meta['tool_version']) ?? str(meta['version']),
    date: dayOf(meta, sessionId),
    risk_score: num(summary['risk_score']) ?? num(meta['risk_score']),
    risk_grade: str(summary['risk_grade']) ?? str(meta['risk_grade']),
    risk_score_operational: num(summary['risk_score_operational']) ?? num(meta['risk_score_operational']),
    risk_grade_operational: str(summary['risk_grade_operational']) ?? str(meta['risk_grade_operational']),
  };
}

/** The findings of a session file in file order; entries of findings[] that are not objects are skipped. */
export function exportFindingsOf(doc: unknown, today = new Date().toISOString().slice(0, 10)): ExportFinding[] {
  const root = isObj(doc) ? doc : {};
  const findings = arr(root['findings']).filter(isObj);
  const track = trackerOf(root, findings);
  return findings.map((f) => {
    const own = fingerprintOfFinding(f);
    const t = track(f, own);
    const e = t?.entry ?? {};
    const ruleId = str(f['rule_id']) ?? str(f['title']) ?? 'finding';
    const host = str(f['host']) ?? str(f['ip']);
    const portRaw = f['port'];
    const port =
      typeof portRaw === 'number' && Number.isInteger(portRaw) && portRaw >= 0 && portRaw <= 65535 ? portRaw : null;
    const protocol = str(f['protocol']);
    const fingerprint = isFingerprint(own)
      ? own
      : findingFingerprint({ rule_id: ruleId, host: host ?? '', port, protocol });
    const refs = isObj(f['references']) ? f['references'] : {};
    const cvss = num(f['cvss']);
    const exception =
      e['exception_status'] === 'accepted' || e['exception_status'] === 'expired' ? e['exception_status'] : null;
    const resolved = t?.resolved === true;
    const expiry = str(e['exception_expiry']);
    const lapsed = e['exception_expired'] === true || (expiry !== null && expiry < today);
    return {
      fingerprint,
      id: str(f['id']),
      rule_id: ruleId,
      title: str(f['title']) ?? ruleId,
      severity: severityOf(f['severity']),
      cvss: cvss !== null && cvss >= 0 && cvss <= 10 ? cvss : null,
      kev: typeof f['kev'] === 'boolean' ? f['kev'] : null,
      kev_date_added: DAY.test(str(f['kev_date_added']) ?? '') ? (f['kev_date_added'] as string) : null,
      epss: unit(f['epss']),
      epss_percentile: unit(f['epss_percentile']),
      host,
      hostname: str(f['hostname']),
      port,
      protocol,
      service: str(f['service']),
      cve: unique(
        [...strings(refs['cve']), ...strings([f['cve']])].map((c) => c.toUpperCase()).filter((c) => CVE.test(c)),
      ),
      cwe: unique(strings(refs['cwe']).flatMap((c) => cweLabel(c) ?? [])),
      // Only links a reader may follow (web-link.ts): a javascript: or data: URL is dropped.
      urls: unique(strings(refs['urls']).flatMap((u) => httpUrl(u) ?? [])),
      description: str(f['description']),
      remediation: str(f['remediation']) ?? str(f['solution']),
      evidence: str(f['evidence']),
      status: t === null ? null : resolved ? 'resolved' : (statusOf(e['status']) ?? 'new'),
      first_seen: str(e['first_seen']),
      // Resolved entries carry no live exception; an accepted one past its expiry reads expired.
      exception_status: resolved ? null : exception === 'accepted' && lapsed ? 'expired' : exception,
      exception_reason: resolved ? null : str(e['exception_reason']),
      exception_approver: resolved ? null : str(e['exception_approver']),
      exception_expiry: resolved ? null : expiry,
      disposition: e['disposition'] === 'false_positive' ? 'false_positive' : null,
      disposition_reason: e['disposition'] === 'false_positive' ? str(e['disposition_reason']) : null,
    };
  });
}

/** `host`, `host:port` or `[v6]:port`; null without a host. */
export function endpointOf(f: Pick<ExportFinding, 'host' | 'port'>): string | null {
  if (f.host === null) return null;
  if (f.port === null) return f.host;
  return f.host.includes(':') ? `[${f.host}]:${f.port}` : `${f.host}:${f.port}`;
}
