import type { Severity } from '../sessions.ts';
import { endpointOf, type ExportFinding, type ExportOptions, exportFindingsOf, exportSessionOf } from './model.ts';

/**
 * SARIF 2.1.0 of a session's findings (docs/exports.md): one run, one rule per rule id, one
 * result per finding. A network finding has no source file, but GitHub code scanning refuses
 * a result without `physicalLocation.artifactLocation.uri`: the location is the relative path
 * `network/<host>/<protocol>/<port>` (segments percent-encoded; `network/<host>` for a
 * host-level finding, `network/session` without a host), and the same place as a logical
 * location `tcp://host:port` for readers that know no files. The finding's fingerprint is
 * both the result's fingerprint and partial fingerprint, so a re-upload updates the alert.
 */

export const SARIF_SCHEMA_URI = 'https://json.schemastore.org/sarif-2.1.0.json';
/** The key under `fingerprints` and `partialFingerprints` (versioned like the fingerprint itself). */
export const SARIF_FINGERPRINT_KEY = 'svcFindingFingerprint/v1';

const LEVEL: Record<Severity, 'error' | 'warning' | 'note'> = {
  critical: 'error',
  high: 'error',
  medium: 'warning',
  low: 'note',
  info: 'note',
};

/** GitHub's `security-severity` (a CVSS-like score as text): the CVSS when known, else the middle of the severity's band. */
const BAND: Record<Severity, number> = { critical: 9.5, high: 8.0, medium: 5.5, low: 2.0, info: 0.0 };
const securitySeverity = (f: ExportFinding): number | null => f.cvss ?? (f.severity === null ? null : BAND[f.severity]);

const seg = (v: string) => encodeURIComponent(v.toLowerCase());

export function sarifArtifactUri(f: Pick<ExportFinding, 'host' | 'port' | 'protocol'>): string {
  if (f.host === null) return 'network/session';
  if (f.port === null) return `network/${seg(f.host)}`;
  return `network/${seg(f.host)}/${seg(f.protocol ?? 'tcp')}/${f.port}`;
}

const drop = <T extends Record<string, unknown>>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined)) as Partial<T>;

/** The CWE taxonomy every CWE of the run refers to (SARIF 2.1.0, section 3.19.3, `run.taxonomies`). */
const SARIF_CWE_TAXONOMY = 'CWE';

const cweNumber = (label: string) => label.slice('CWE-'.length);

function cweTaxonomy(cwes: string[]): Record<string, unknown> {
  return {
    name: SARIF_CWE_TAXONOMY,
    organization: 'MITRE',
    shortDescription: { text: 'The MITRE Common Weakness Enumeration' },
    informationUri: 'https://cwe.mitre.org/',
    isComprehensive: false,
    taxa: cwes.map((c) => ({
      id: cweNumber(c),
      helpUri: `https://cwe.mitre.org/data/definitions/${cweNumber(c)}.html`,
    })),
  };
}

function ruleOf(f: ExportFinding, worst: number | null, cwes: string[]): Record<string, unknown> {
  const help = [f.remediation, ...f.urls].filter((v) => v !== null).join('\n\n');
  return drop({
    id: f.rule_id,
    name: f.title,
    shortDescription: { text: f.title },
    fullDescription: { text: f.description ?? f.title },
    help: { text: help === '' ? f.title : help },
    helpUri: f.urls[0] ?? null,
    defaultConfiguration: { level: f.severity === null ? 'note' : LEVEL[f.severity] },
    properties: drop({
      tags: ['security', 'network', ...cwes],
      'security-severity': worst === null ? null : worst.toFixed(1),
    }),
  });
}

function resultOf(
  f: ExportFinding,
  ruleIndex: number,
  taxonIndex: Map<string, number>,
  opts: ExportOptions,
): Record<string, unknown> {
  const where = endpointOf(f);
  const logical = where === null || f.port === null ? where : `${f.protocol ?? 'tcp'}://${where}`;
  const suppressed = f.exception_status === 'accepted';
  const falsePositive = f.disposition === 'false_positive';
  return drop({
    ruleId: f.rule_id,
    ruleIndex,
    level: f.severity === null ? 'note' : LEVEL[f.severity],
    message: { text: where === null ? f.title : `${f.title} on ${where}` },
    locations: [
      drop({
        physicalLocation: { artifactLocation: { uri: sarifArtifactUri(f) }, region: { startLine: 1 } },
        logicalLocations: logical === null ? null : [{ name: where, fullyQualifiedName: logical, kind: 'resource' }],
      }),
    ],
    fingerprints: { [SARIF_FINGERPRINT_KEY]: f.fingerprint },
    partialFingerprints: { [SARIF_FINGERPRINT_KEY]: f.fingerprint },
    // An accepted risk is reported, marked as such; an expired exception is not a suppression.
    // A false positive is suppressed too, justified as one (docs/exports.md#sarif).
    suppressions: falsePositive
      ? [drop({ kind: 'external', status: 'accepted', justification: `false positive: ${f.disposition_reason ?? ''}` })]
      : suppressed
        ? [drop({ kind: 'external', status: 'accepted', justification: f.exception_reason })]
        : null,
    hostedViewerUri: opts.sessionUrl ?? null,
    // Every CWE, as references into the run's CWE taxonomy (where SARIF readers look for them).
    taxa:
      f.cwe.length === 0
        ? null
        : f.cwe.map((c) => ({
            id: cweNumber(c),
            index: taxonIndex.get(c),
            toolComponent: { name: SARIF_CWE_TAXONOMY, index: 0 },
          })),
    properties: drop({
      severity: f.severity,
      cvss: f.cvss,
      'security-severity': securitySeverity(f)?.toFixed(1) ?? null,
      kev: f.kev,
      kev_date_added: f.kev_date_added,
      epss: f.epss,
      epss_percentile: f.epss_percentile,
      // Every CVE. CWEs are in `taxa`: DefectDojo's SARIF parser runs a regex over a result's
      // `properties.cwe` and fails on a list (docs/exports.md#sarif).
      cve: f.cve.length === 0 ? null : f.cve,
      host: f.host,
      hostname: f.hostname,
      port: f.port,
      protocol: f.protocol,
      service: f.service,
      evidence: f.evidence,
      status: f.status,
      first_seen: f.first_seen,
      exception_status: f.exception_status,
      exception_approver: f.exception_approver,
      disposition: f.disposition,
      exception_expiry: f.exception_expiry,
    }),
  });
}

/**
 * The SARIF log in pieces: the run's header with every rule, then one result per piece, then
 * the closing brackets. Joined, they are one JSON document.
 */
export function* sarifChunks(doc: unknown, opts: ExportOptions = {}): Generator<string> {
  const session = exportSessionOf(doc);
  const findings = exportFindingsOf(doc, opts.today);
  const rules = new Map<string, { first: ExportFinding; worst: number | null; cwes: Set<string> }>();
  const taxonIndex = new Map<string, number>();
  for (const f of findings) {
    const s = securitySeverity(f);
    const seen = rules.get(f.rule_id);
    if (seen === undefined) rules.set(f.rule_id, { first: f, worst: s, cwes: new Set(f.cwe) });
    else {
      if (s !== null && (seen.worst === null || s > seen.worst)) seen.worst = s;
      for (const c of f.cwe) seen.cwes.add(c);
    }
    for (const c of f.cwe) if (!taxonIndex.has(c)) taxonIndex.set(c, taxonIndex.size);
  }
  const index = new Map([...rules.keys()].map((id, i) => [id, i]));
  const run = {
    tool: {
      driver: drop({
        name: 'svc',
        version: session.tool_version ?? opts.toolVersion ?? null,
        informationUri: opts.sessionUrl ?? null,
        rules: [...rules.values()].map((r) => ruleOf(r.first, r.worst, [...r.cwes])),
      }),
    },
    ...(taxonIndex.size === 0 ? {} : { taxonomies: [cweTaxonomy([...taxonIndex.keys()])] }),
    // One category per scanned target: a re-upload replaces the target's earlier analysis.
    automationDetails: { id: `svc/${session.target ?? 'session'}/` },
    properties: drop({
      session_id: session.session_id,
      client_id: session.client_id,
      target: session.target,
      risk_score: session.risk_score,
      risk_grade: session.risk_grade,
      risk_score_operational: session.risk_score_operational,
      risk_grade_operational: session.risk_grade_operational,
    }),
  };
  const head = JSON.stringify({ $schema: SARIF_SCHEMA_URI, version: '2.1.0', runs: [{ ...run, results: [] }] });
  // Open the results array of the serialised head: everything before its closing `]}]}`.
  yield `${head.slice(0, -4)}\n`;
  let first = true;
  for (const f of findings) {
    yield `${first ? '' : ',\n'}${JSON.stringify(resultOf(f, index.get(f.rule_id) ?? 0, taxonIndex, opts))}`;
    first = false;
  }
  yield '\n]}]}\n';
}

export const toSarif = (doc: unknown, opts: ExportOptions = {}): string => [...sarifChunks(doc, opts)].join('');
