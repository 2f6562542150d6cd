import {
  type FindingChange,
  lenient,
  REMEDIATION_STATUSES,
  type RemediationStatus,
  scoringSeverity,
  SEVERITIES,
  type Severity,
} from '@svc/protocol';
import { fingerprintOfFinding, trackerOf } from '@svc/protocol/node';
import type { Insertable } from 'kysely';
import type { SessionFindingsTable } from '../db/schema.ts';
import { recordKeyOf } from '../records/evidence.ts';
import type { RecordRow } from '../records/model.ts';

/**
 * The findings index of one session file (pure): one row per object of `findings[]`, with
 * what its remediation entry says (status, note, first seen, exception) and the sort keys
 * the findings endpoint pages by. Kept beside the stored file: built at upload, patched at a
 * remediation update, rebuilt when the stored file and the index disagree (findings.ts).
 */

type Obj = lenient.Obj;
/** A row of session_findings plus its `detail` (stored in its page, detail-pages.ts). */
export type IndexRow = Omit<Insertable<SessionFindingsTable>, 'client_id' | 'session_id'> & { detail: string };

const { isObj, str, num } = lenient;

const CVE = /^CVE-\d{4}-\d{4,}$/;

const severityOf = (v: unknown): Severity | null => {
  const s = typeof v === 'string' ? v.toLowerCase() : '';
  return (SEVERITIES as readonly string[]).includes(s) ? (s as Severity) : null;
};
const isStatus = (v: unknown): v is RemediationStatus =>
  typeof v === 'string' && (REMEDIATION_STATUSES as readonly string[]).includes(v);

/** Most severe highest, so that `order=desc` lists critical first; unknown below info. */
export const severityKey = (s: Severity | null): number =>
  s === null ? -1 : SEVERITIES.length - 1 - SEVERITIES.indexOf(s);
/** Statuses in the protocol's order, untracked last. */
export const statusKey = (s: RemediationStatus | null): number =>
  s === null ? REMEDIATION_STATUSES.length : REMEDIATION_STATUSES.indexOf(s);

/** IPv4 addresses sort by number (10.0.0.2 before 10.0.0.10); anything else by its lower-cased text. */
function hostKey(host: string | null, hostname: string | null): string {
  const h = (host ?? '').toLowerCase();
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h);
  const key = v4
    ? v4
        .slice(1)
        .map((o) => o.padStart(3, '0'))
        .join('.')
    : h;
  return `${key} ${(hostname ?? '').toLowerCase()}`.trimEnd();
}

function cveIdsOf(f: Obj): string[] {
  const refs = isObj(f['references']) ? f['references'] : {};
  const ids = [...lenient.arr(refs['cve']), f['cve']]
    .map((v) => (typeof v === 'string' ? v.trim().toUpperCase() : ''))
    .filter((v) => CVE.test(v));
  return [...new Set(ids)].sort();
}

const strings = (v: unknown): string[] => lenient.arr(v).flatMap((x) => (str(x) === null ? [] : [x as string]));

/** A number from 0 to 1, else null. */
function probability(v: unknown): number | null {
  const n = num(v);
  return n !== null && n >= 0 && n <= 1 ? n : null;
}

/**
 * The rows of a session file's findings, in file order (`ordinal` is the position in findings[]).
 * `fingerprint` holds the finding's record key (records/evidence.ts), which the rows are joined
 * to their findings of record by; status, note and exception are what the file's entry said
 * (read only for a finding without a record). `changes` says what the upload did to each.
 */
export function indexRowsOf(doc: unknown, changes?: ReadonlyMap<string, FindingChange | null>): IndexRow[] {
  return [...indexRowsIn(doc, changes)];
}

/**
 * The position after the last entry of `findings[]`: where the rows of the records a session did
 * not report start. A row's ordinal is its entry's position, and an entry that is not an object
 * has no row, so this can exceed indexRowCount.
 */
export function endOfFindings(doc: unknown): number {
  const root = isObj(doc) ? doc : {};
  return lenient.arr(root['findings']).length;
}

/** How many rows indexRowsIn yields: the objects of `findings[]`. */
export function indexRowCount(doc: unknown): number {
  const root = isObj(doc) ? doc : {};
  return lenient.arr(root['findings']).filter(isObj).length;
}

/**
 * indexRowsOf one row at a time: an upload builds each chunk of rows while the chunk before
 * it is written (findings-queries.ts), and never holds every row at once.
 */
export function* indexRowsIn(doc: unknown, changes?: ReadonlyMap<string, FindingChange | null>): Generator<IndexRow> {
  const root = isObj(doc) ? doc : {};
  const raw = lenient.arr(root['findings']);
  const track = trackerOf(root, raw.filter(isObj));
  for (let ordinal = 0; ordinal < raw.length; ordinal++) {
    const f = raw[ordinal];
    if (!isObj(f)) continue;
    const fp = fingerprintOfFinding(f);
    const t = track(f, fp);
    const key = recordKeyOf(f);
    const e = t?.entry ?? {};
    const title = str(f['title']) ?? str(f['rule_id']) ?? '';
    const severity = severityOf(f['severity']);
    const cvssRaw = num(f['cvss']);
    const cvss = cvssRaw !== null && cvssRaw >= 0 && cvssRaw <= 10 ? cvssRaw : null;
    const host = str(f['host']) ?? str(f['ip']);
    const hostname = str(f['hostname']);
    const portRaw = f['port'];
    const port =
      typeof portRaw === 'number' && Number.isInteger(portRaw) && portRaw >= 0 && portRaw <= 65535 ? portRaw : null;
    const status: RemediationStatus | null =
      t === null ? null : t.resolved ? 'resolved' : isStatus(e['status']) ? e['status'] : 'new';
    const cveIds = cveIdsOf(f);
    const exceptionStatus =
      e['exception_status'] === 'accepted' || e['exception_status'] === 'expired' ? e['exception_status'] : null;
    const ruleId = str(f['rule_id']);
    const service = str(f['service']);
    const firstSeen = str(e['first_seen']);
    const refs = isObj(f['references']) ? f['references'] : {};
    const kevDate = str(f['kev_date_added']);
    yield {
      ordinal,
      fingerprint: key,
      in_scan: true,
      change: key === null ? null : (changes?.get(key) ?? null),
      score_severity: scoringSeverity(f),
      title,
      severity,
      severity_key: severityKey(severity),
      cvss,
      cvss_key: cvss === null ? -1 : Math.round(cvss * 10),
      cve_ids: cveIds,
      cve_key: cveIds[0] ?? '',
      host,
      hostname,
      host_key: hostKey(host, hostname),
      port,
      port_key: port ?? -1,
      protocol: str(f['protocol']),
      status,
      status_key: statusKey(status),
      tracked_by: t?.by ?? null,
      first_seen: firstSeen,
      first_seen_key: firstSeen ?? '',
      status_changed: str(e['status_changed']),
      note: str(e['note']) ?? '',
      // Resolved entries carry no live exception (exception_summary counts open entries only).
      exception_status: t?.resolved ? null : exceptionStatus,
      exception_expired: e['exception_expired'] === true || exceptionStatus === 'expired',
      exception_reason: str(e['exception_reason']),
      exception_approver: str(e['exception_approver']),
      exception_approved_at: str(e['exception_approved_at']),
      exception_expiry: str(e['exception_expiry']),
      kev: f['kev'] === true,
      kev_date_added: kevDate !== null && /^\d{4}-\d{2}-\d{2}$/.test(kevDate) ? kevDate : null,
      epss: probability(f['epss']),
      epss_percentile: probability(f['epss_percentile']),
      search: [title, host, hostname, ...cveIds, ruleId, service]
        .filter((v) => v !== null && v !== '')
        .join('\n')
        .toLowerCase(),
      detail: JSON.stringify({
        id: str(f['id']),
        rule_id: ruleId,
        service,
        evidence: str(f['evidence']),
        description: str(f['description']),
        remediation: str(f['remediation']) ?? str(f['solution']),
        references: { cve: cveIds, cwe: strings(refs['cwe']), urls: strings(refs['urls']) },
        prior_status: isStatus(e['prior_status']) ? e['prior_status'] : null,
      }),
    };
  }
}

/**
 * Rows for the records a session did not report (in_scan false), after its findings: the ones
 * it resolved and the ones it did not check. What they show comes from the record.
 */
export function missingRowsOf(
  missing: readonly { record: RecordRow; change: 'resolved' | 'not_checked' }[],
  firstOrdinal: number,
): IndexRow[] {
  return missing.map(({ record: r, change }, i) => {
    const severity = severityOf(r.severity);
    const cveIds = [...r.cve_ids].sort();
    return {
      ordinal: firstOrdinal + i,
      fingerprint: r.fingerprint,
      in_scan: false,
      change,
      score_severity: null,
      title: r.title,
      severity,
      severity_key: severityKey(severity),
      cvss: null,
      cvss_key: -1,
      cve_ids: cveIds,
      cve_key: cveIds[0] ?? '',
      host: r.host,
      hostname: null,
      host_key: hostKey(r.host, null),
      port: r.port,
      port_key: r.port ?? -1,
      protocol: r.protocol,
      status: change === 'resolved' ? 'resolved' : null,
      status_key: statusKey(change === 'resolved' ? 'resolved' : null),
      tracked_by: 'fingerprint',
      first_seen: r.first_seen,
      first_seen_key: r.first_seen,
      status_changed: null,
      note: '',
      exception_status: null,
      exception_expired: false,
      exception_reason: null,
      exception_approver: null,
      exception_approved_at: null,
      exception_expiry: null,
      kev: r.kev,
      kev_date_added: null,
      epss: r.epss,
      epss_percentile: null,
      search: [r.title, r.host, ...cveIds, r.rule_id]
        .filter((v) => v !== null && v !== '')
        .join('\n')
        .toLowerCase(),
      detail: JSON.stringify({
        id: null,
        rule_id: r.rule_id,
        service: null,
        evidence: null,
        description: null,
        remediation: null,
        references: { cve: cveIds, cwe: [], urls: [] },
        prior_status: null,
      }),
    };
  });
}

/** The blocks the session view draws besides findings, as stored (null when absent or not an object). */
export function viewBlocksOf(doc: unknown): { topology: string | null; orc_964: string | null } {
  const root = isObj(doc) ? doc : {};
  // PostgreSQL's jsonb refuses \u0000 and unpaired surrogates (JSON.stringify escapes both): such a block is left out.
  const block = (v: unknown) => {
    const text = isObj(v) ? JSON.stringify(v) : null;
    return text === null || /\\u(0000|d[89a-f])/i.test(text) ? null : text;
  };
  return { topology: block(root['topology']), orc_964: block(root['orc_964']) };
}
