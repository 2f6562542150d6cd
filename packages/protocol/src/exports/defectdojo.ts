import type { Severity } from '../sessions.ts';
import { endpointOf, type ExportFinding, type ExportOptions, exportFindingsOf, exportSessionOf } from './model.ts';

/**
 * DefectDojo's Generic Findings Import, JSON flavour (docs/exports.md). DefectDojo refuses a
 * file whose finding carries a key outside its parser's list, so only listed keys are written
 * (packages/protocol/tests/exports-defectdojo.test.ts holds the list). `unique_id_from_tool`
 * is the finding's fingerprint: with the test type's deduplication set to
 * `unique_id_from_tool`, a re-import updates the same findings and closes those gone.
 */

/** The report's test type: DefectDojo names it "svc (Generic Findings Import)"; keep it stable across imports. */
export const DEFECTDOJO_TEST_TYPE = 'svc';

const SEVERITY: Record<Severity, string> = {
  critical: 'Critical',
  high: 'High',
  medium: 'Medium',
  low: 'Low',
  info: 'Info',
};

const lines = (...parts: (string | null | false)[]) =>
  parts.filter((p): p is string => typeof p === 'string').join('\n');

/** The description: the finding's text plus what DefectDojo has no field for (where, evidence, status, exception). */
function describe(f: ExportFinding): string {
  const where = endpointOf(f);
  const exception =
    f.exception_status === null
      ? null
      : `Risk exception: ${f.exception_status}${f.exception_expiry === null ? '' : ` until ${f.exception_expiry}`}${
          f.exception_approver === null ? '' : `, approved by ${f.exception_approver}`
        }${f.exception_reason === null ? '' : ` (${f.exception_reason})`}`;
  return lines(
    f.description ?? f.title,
    '',
    where !== null &&
      `Affected: ${where}${f.protocol === null ? '' : `/${f.protocol}`}${f.service === null ? '' : ` (${f.service})`}`,
    f.hostname !== null && `Host name: ${f.hostname}`,
    f.evidence !== null && `Evidence: ${f.evidence}`,
    f.cve.length > 1 && `CVEs: ${f.cve.join(', ')}`,
    f.kev === true && `Known exploited (CISA KEV)${f.kev_date_added === null ? '' : `, added ${f.kev_date_added}`}`,
    f.status !== null &&
      `Remediation status: ${f.status}${f.first_seen === null ? '' : `, first seen in ${f.first_seen}`}`,
    exception,
    `Rule: ${f.rule_id}`,
  );
}

function findingOf(f: ExportFinding, date: string | null, opts: ExportOptions): Record<string, unknown> {
  const acceptedRisk = f.exception_status === 'accepted';
  const mitigated = f.status === 'resolved';
  const cwe = f.cwe[0] === undefined ? null : Number(f.cwe[0].slice(4));
  const references = [...f.urls, ...(opts.sessionUrl === undefined ? [] : [opts.sessionUrl])].join('\n');
  const out: Record<string, unknown> = {
    title: f.title,
    severity: f.severity === null ? 'Info' : SEVERITY[f.severity],
    description: describe(f),
    mitigation: f.remediation,
    references: references === '' ? null : references,
    date,
    cve: f.cve[0] ?? null,
    // Every CVE: DefectDojo stores `cve` and these as the finding's vulnerability ids (duplicates dropped).
    vulnerability_ids: f.cve.length === 0 ? null : f.cve,
    cwe,
    // Every CWE beside the first: only when there are several, as DefectDojo before 3.2.0 refuses
    // the whole file over a `cwes` key (docs/exports.md#defectdojo).
    cwes: f.cwe.length > 1 ? f.cwe.map((c) => Number(c.slice(4))) : null,
    cvssv3_score: f.cvss,
    epss_score: f.epss,
    epss_percentile: f.epss_percentile,
    known_exploited: f.kev,
    kev_date: f.kev_date_added,
    unique_id_from_tool: f.fingerprint,
    vuln_id_from_tool: f.rule_id,
    active: !mitigated && !acceptedRisk && f.disposition === null,
    verified: false,
    false_p: f.disposition === 'false_positive',
    risk_accepted: acceptedRisk,
    is_mitigated: mitigated,
    static_finding: false,
    dynamic_finding: true,
    endpoints:
      f.host === null
        ? null
        : [
            Object.fromEntries(
              Object.entries({ host: f.host, port: f.port, protocol: f.protocol }).filter(([, v]) => v !== null),
            ),
          ],
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== null));
}

/** The report in pieces: its header, one finding per piece, the closing brackets. */
export function* defectDojoChunks(doc: unknown, opts: ExportOptions = {}): Generator<string> {
  const session = exportSessionOf(doc);
  const head = {
    name: 'svc',
    type: DEFECTDOJO_TEST_TYPE,
    ...((session.tool_version ?? opts.toolVersion) ? { version: session.tool_version ?? opts.toolVersion } : {}),
    description: `Session ${session.session_id}${session.target === null ? '' : ` of ${session.target}`}`,
    dynamic_tool: true,
    static_tool: false,
    findings: [],
  };
  yield `${JSON.stringify(head).slice(0, -2)}\n`;
  let first = true;
  for (const f of exportFindingsOf(doc, opts.today)) {
    yield `${first ? '' : ',\n'}${JSON.stringify(findingOf(f, session.date, opts))}`;
    first = false;
  }
  yield '\n]}\n';
}

export const toDefectDojo = (doc: unknown, opts: ExportOptions = {}): string =>
  [...defectDojoChunks(doc, opts)].join('');
