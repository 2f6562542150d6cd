import { lenient, type RemediationStatus, scoringSeverity, severityOf, type Severity } from '@svc/protocol';
import { findingFingerprint, fingerprintOfFinding, sha256Hex, trackerOf } from '@svc/protocol/node';

/**
 * What an uploaded session file says, read for the findings of record (pure): each finding
 * with its record key and where it is, and what the file's remediation entry for it claims
 * (docs/findings-of-record.md#who-decides). The scan's evidence (findings) is taken as
 * reported; the decisions in the entries are claims the merge weighs by who uploaded them.
 */

const { isObj, str, num, arr } = lenient;
type Obj = lenient.Obj;

const CVE = /^CVE-\d{4}-\d{4,}$/;
const SESSION_ID = /^[a-zA-Z0-9_-]+$/;

/**
 * The record key of a finding: the fingerprint of its rule, host, port and transport,
 * computed here and never taken from the file (a file naming another finding's fingerprint
 * would take that finding's decisions); a finding without rule or host is keyed by its title
 * and host. Null when it has neither rule nor title.
 */
export function recordKeyOf(f: Obj): string | null {
  const host = str(f['host']) ?? str(f['ip']);
  const rule = str(f['rule_id'])?.trim() || null;
  if (rule !== null && host !== null && host.trim() !== '')
    return findingFingerprint({
      rule_id: rule,
      host,
      port: typeof f['port'] === 'number' ? f['port'] : null,
      protocol: str(f['protocol']),
    });
  const title = str(f['title'])?.trim() || rule;
  if (title === null || title === undefined) return null;
  return sha256Hex(JSON.stringify(['svc-finding-title-v1', title, (host ?? '').trim().toLowerCase()]));
}

/** What a file's entry asks the record to be; each part only when the entry states it. */
export interface Claims {
  /** A decision status (in_progress or deferred) and when the file says it was set. */
  status?: { value: 'in_progress' | 'deferred'; at: Date | null };
  note?: string;
  exception?: { reason: string; approver: string | null; approvedAt: Date | null; expiry: string | null };
  disposition?: { reason: string; by: string | null; at: Date | null };
  /** For a finding the portal has no record of yet: where the file says it was first seen, and its automatic status. */
  firstSeen?: string;
  persistent?: boolean;
}

export interface EvidenceFinding {
  key: string;
  ordinal: number;
  title: string;
  severity: Severity | null;
  scoreSeverity: Severity | null;
  rule_id: string | null;
  host: string | null;
  port: number | null;
  protocol: string | null;
  cve_ids: string[];
  kev: boolean;
  epss: number | null;
  claims: Claims;
}

const instant = (v: unknown): Date | null => {
  const s = str(v);
  if (s === null) return null;
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? null : d;
};
const day = (v: unknown): string | null => {
  const s = str(v);
  return s !== null && /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) ? s : null;
};

function claimsOf(e: Obj | null): Claims {
  if (e === null) return {};
  const out: Claims = {};
  const status = e['status'] as RemediationStatus | undefined;
  if (status === 'in_progress' || status === 'deferred')
    out.status = { value: status, at: instant(e['status_changed']) };
  if (status === 'persistent') out.persistent = true;
  const note = str(e['note']);
  if (note !== null && note.trim() !== '') out.note = note;
  const reason = str(e['exception_reason']);
  if (
    (e['exception_status'] === 'accepted' || e['exception_status'] === 'expired') &&
    reason !== null &&
    reason.trim() !== ''
  )
    out.exception = {
      reason,
      approver: str(e['exception_approver']),
      approvedAt: instant(e['exception_approved_at']),
      expiry: day(e['exception_expiry']),
    };
  const fpReason = str(e['disposition_reason']);
  if (e['disposition'] === 'false_positive' && fpReason !== null && fpReason.trim() !== '')
    out.disposition = { reason: fpReason, by: str(e['disposition_by']), at: instant(e['disposition_at']) };
  const first = str(e['first_seen']);
  if (first !== null && SESSION_ID.test(first)) out.firstSeen = first;
  return out;
}

function cveIdsOf(f: Obj): string[] {
  const refs = isObj(f['references']) ? f['references'] : {};
  const ids = [...arr(refs['cve']), f['cve']]
    .map((v) => (typeof v === 'string' ? v.trim().toUpperCase() : ''))
    .filter((v) => CVE.test(v));
  return [...new Set(ids)].sort();
}

/** The findings of a file with their record keys and claims; findings without a key are left out. */
export function evidenceOf(doc: unknown): EvidenceFinding[] {
  const root = isObj(doc) ? doc : {};
  const raw = arr(root['findings']);
  const track = trackerOf(root, raw.filter(isObj));
  // An entry found by its title alone speaks for its finding only when no other finding has that title.
  const titles = new Map<string, number>();
  for (const f of raw) if (isObj(f)) titles.set(String(f['title']), (titles.get(String(f['title'])) ?? 0) + 1);
  const out: EvidenceFinding[] = [];
  const seen = new Set<string>();
  raw.forEach((f, ordinal) => {
    if (!isObj(f)) return;
    const key = recordKeyOf(f);
    // The same weakness twice in one file is one finding of record; the first carries it.
    if (key === null || seen.has(key)) return;
    seen.add(key);
    // Within the file its own fingerprints pair findings with entries, as the file meant them.
    const t = track(f, fingerprintOfFinding(f));
    const port = f['port'];
    const epss = num(f['epss']);
    out.push({
      key,
      ordinal,
      title: str(f['title']) ?? str(f['rule_id']) ?? '',
      severity: severityOf(f['severity']),
      scoreSeverity: scoringSeverity(f),
      rule_id: str(f['rule_id']),
      host: str(f['host']) ?? str(f['ip']),
      port: typeof port === 'number' && Number.isInteger(port) && port >= 0 && port <= 65535 ? port : null,
      protocol: str(f['protocol'])?.toLowerCase() ?? null,
      cve_ids: cveIdsOf(f),
      kev: f['kev'] === true,
      epss: epss !== null && epss >= 0 && epss <= 1 ? epss : null,
      claims:
        t === null || t.resolved || (t.by === 'title' && titles.get(String(f['title'])) !== 1) ? {} : claimsOf(t.entry),
    });
  });
  return out;
}
