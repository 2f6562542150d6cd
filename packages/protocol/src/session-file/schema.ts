import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { SESSION_ID_PATTERN } from '../session-id.ts';
import { REMEDIATION_STATUSES, SEVERITIES } from '../sessions.ts';
import { CoverageBlock } from './coverage.ts';
import { Finding } from './finding.ts';
import { Fingerprint } from './fingerprint-shape.ts';
import { literals, nullable, opt, text, timestamp } from './schema-parts.ts';
import { TRIAGE_ENTRY_FIELDS } from './triage-fields.ts';

/**
 * The scanner's session_results.json (docs/session-file.md). Older files lack most
 * blocks and newer ones carry fields we do not know, so every field is optional and every
 * object allows unknown fields; only the session id is required, in `metadata.session_id`
 * or, in very old files, at the top level. This states what a well-formed file looks like;
 * readers stay more lenient (a field of the wrong type counts as absent, read.ts).
 * docs/session-file.schema.json is generated from it (npm run schema:session-file).
 */

const open = <T extends Record<string, TSchema>>(properties: T, description: string) =>
  Type.Object(properties, { additionalProperties: true, description });
const count = (description: string) => Type.Number({ minimum: 0, description });
const score = (description: string) => Type.Number({ minimum: 0, maximum: 100, description });
const grade = (description: string) => Type.String({ pattern: '^[A-F]$', description });

const SessionIdField = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: SESSION_ID_PATTERN,
  description: 'Scanner session id, YYYYMMDD_HHMMSS',
});
const BySeverityCounts = (description: string) =>
  open(Object.fromEntries(SEVERITIES.map((s) => [s, opt(count(`${s} findings`))])), description);

export const RemediationSummaryBlock = open(
  {
    total: opt(count('Entries in remediation[] and remediation_resolved[]')),
    resolved_count: opt(count('Resolved entries')),
    by_status: opt(
      open(
        Object.fromEntries(REMEDIATION_STATUSES.map((s) => [s, opt(count(`Entries with status ${s}`))])),
        'Entries per remediation status',
      ),
    ),
    by_severity: opt(BySeverityCounts('Entries per severity')),
  },
  'Remediation totals (defaulted at read time when absent)',
);

export const LicenseBlock = open(
  {
    tier: opt(literals(['pro', 'biz', 'msp', 'legacy'], 'Tier the scanner resolved')),
    fingerprint: opt(text('SHA-256 of the key, never the key')),
    source: opt(text('Where the scanner found the key')),
    validated_at: opt(timestamp('When the key was validated')),
  },
  "The scanner's license (v4.2.3); the portal ignores it",
);

export const SessionFileMetadata = open(
  {
    session_id: opt(SessionIdField),
    client_id: opt(text('Tenant the session belongs to (client scoping)')),
    client: opt(text('Client display name')),
    client_name: opt(text('Older name of client')),
    target: opt(text('Scanned network or host')),
    tool_version: opt(text('Scanner version')),
    version: opt(text('Older name of tool_version')),
    scan_profile: opt(text('Scan profile')),
    started_at: opt(timestamp('Scan start')),
    run_id: opt(
      Type.String({
        pattern: '^[0-9a-f]{32}$',
        description:
          'A random id of this scan run: a re-upload of the same run replaces the session; another run under its session id is refused (409)',
      }),
    ),
    finished_at: opt(timestamp('Scan end')),
    risk_score: opt(score('Older place of summary.risk_score')),
    risk_grade: opt(grade('Older place of summary.risk_grade')),
    risk_score_operational: opt(nullable(score('Risk score without accepted, unexpired exceptions'))),
    risk_grade_operational: opt(nullable(grade('Grade of the operational score'))),
    has_exec_summary: opt(Type.Boolean({ description: 'Ignored: the portal decides from the upload' })),
    has_topology: opt(Type.Boolean({ description: 'True when topology.nodes is non-empty' })),
    remediation_summary: opt(RemediationSummaryBlock),
    exception_summary: opt(
      open(
        {
          total_exceptions: opt(count('Accepted plus expired')),
          by_status: opt(
            open(
              { accepted: opt(count('Accepted exceptions')), expired: opt(count('Expired exceptions')) },
              'Exceptions per status',
            ),
          ),
          score_delta: opt(Type.Number({ description: 'Actual minus operational risk score' })),
        },
        'Risk exceptions of the open findings',
      ),
    ),
    disposition_summary: opt(
      open(
        { false_positive: opt(count('Open findings marked as false positives')) },
        'Dispositions of the open findings (docs/session-file.md#triage)',
      ),
    ),
    compliance_summary: opt(
      open(
        {
          total_mappings: opt(count('Entries of compliance[]')),
          by_framework: opt(Type.Array(open({}, 'Totals of one framework'))),
        },
        'Compliance totals',
      ),
    ),
    alerts_summary: opt(open({}, 'Older place of the top-level alerts_summary')),
    schedule_id: opt(Type.String({ description: 'sched_<12 hex>, derived from target and cron' })),
    schedule_cron: opt(text('Cron expression of the schedule')),
    schedule_profile: opt(text('Scan profile of the schedule')),
    is_scheduled: opt(Type.Boolean({ description: 'True for a scheduled scan' })),
    scheduled_by: opt(literals(['daemon', 'cron'], 'What started the scheduled scan')),
    license: opt(LicenseBlock),
  },
  'Session metadata',
);

export const SessionFileSummary = open(
  {
    risk_score: opt(score('Risk score over every open finding, bounded below by the worst one (docs/scoring.md)')),
    risk_grade: opt(grade('Grade A-F of risk_score')),
    total_findings: opt(count('Findings in this session')),
    total_hosts: opt(count('Hosts scanned')),
    severity_counts: opt(BySeverityCounts('Findings per severity')),
    by_severity: opt(BySeverityCounts('Older name of severity_counts')),
    risk_score_operational: opt(score('Risk score without findings under an accepted, unexpired exception')),
    risk_grade_operational: opt(grade('Grade of the operational score')),
    exception_impact: opt(
      open(
        {
          excepted_count: opt(count('Findings under an accepted, unexpired exception')),
          score_delta: opt(Type.Number({ description: 'risk_score minus risk_score_operational' })),
          excepted_findings: opt(BySeverityCounts('Excepted findings per severity')),
        },
        'What the exceptions take off the score',
      ),
    ),
  },
  'Scores and totals (dual scoring)',
);

export const RemediationEntry = open(
  {
    title: opt(text('Title of the finding; remediation updates match by title')),
    severity: opt(literals(SEVERITIES, 'Severity of the finding')),
    kev: opt(Type.Boolean({ description: 'The finding names a known-exploited CVE (it scores as critical)' })),
    epss: opt(Type.Number({ minimum: 0, maximum: 1, description: "The finding's EPSS (it scores higher from 0.1)" })),
    finding_id: opt(text('findings[].id in this session')),
    fingerprint: opt(Fingerprint),
    host: opt(text('Affected host')),
    status: opt(literals(REMEDIATION_STATUSES, 'Remediation status')),
    status_changed: opt(timestamp('Time of the last status change')),
    note: opt(Type.String({ description: 'Free text' })),
    first_seen: opt(text('Session id where the item first appeared')),
    prior_status: opt(nullable(literals(REMEDIATION_STATUSES, 'Status in the prior session'))),
    exception_status: opt(
      nullable(literals(['accepted', 'expired'], 'Risk exception: null (none), accepted or expired')),
    ),
    exception_reason: opt(nullable(text('Justification'))),
    exception_approver: opt(nullable(text('Approver'))),
    exception_approved_at: opt(nullable(timestamp('Approval time'))),
    exception_expiry: opt(
      nullable(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'Auto-expiry date, YYYY-MM-DD' })),
    ),
    exception_expired: opt(Type.Boolean({ description: 'True when past expiry' })),
    ...TRIAGE_ENTRY_FIELDS,
  },
  'One remediation item (docs/session-file.md)',
);

export const ComplianceEntry = open(
  {
    framework: opt(text('CIS Controls v8, NIST CSF, PCI-DSS v4.0, SOC 2, ORC 9.64, or another framework')),
    control_id: opt(
      text(
        "An id of the framework's list: CIS Safeguard (4.7), NIST CSF 2.0 Subcategory (PR.AA-01), PCI DSS 4.0 requirement (8.3), SOC 2 common criterion (CC6.1), ORC division (9.64(C)(1)); docs/compliance.md",
      ),
    ),
    control_name: opt(text('Control name')),
    finding_ids: opt(Type.Array(Type.String(), { description: 'findings[].id mapped to the control' })),
  },
  'One control a finding maps to',
);

export const Topology = open(
  {
    nodes: opt(
      Type.Array(
        open(
          {
            ip: opt(text('Host address')),
            hostname: opt(text('Host name')),
            os_guess: opt(text('Guessed operating system')),
            port_count: opt(count('Open ports')),
            risk_score: opt(score('Risk score of the host')),
            risk_grade: opt(grade('Grade of the host')),
            subnet: opt(text('/24 prefix')),
          },
          'One host',
        ),
      ),
    ),
    links: opt(
      Type.Array(
        open(
          { source_ip: opt(text('From')), target_ip: opt(text('To')), type: opt(literals(['subnet'], 'Link type')) },
          'Hosts sharing a subnet',
        ),
      ),
    ),
    subnets: opt(
      Type.Array(
        open(
          {
            prefix: opt(text('/24 prefix')),
            host_count: opt(count('Hosts in the subnet')),
            avg_risk: opt(score('Average host risk')),
          },
          'One subnet',
        ),
      ),
    ),
  },
  'Network topology',
);

export const Orc964Block = open(
  {
    enabled: opt(Type.Boolean({ description: 'Always true when present' })),
    deadlines: opt(
      open(
        {
          county_city: opt(Type.String({ description: '2026-01-01' })),
          other: opt(Type.String({ description: '2026-07-01' })),
          applicable: opt(literals(['county_city', 'other'], 'From ORC_SUBDIVISION_CLASS')),
        },
        'Compliance deadlines',
      ),
    ),
    divisions: opt(
      Type.Array(
        open(
          {
            id: opt(text('9.64(C)(1) to 9.64(C)(5)')),
            name: opt(text('Division name')),
            type: opt(literals(['technical'], 'Always technical')),
            mapped: opt(Type.Boolean({ description: 'True when a finding maps to it' })),
            finding_ids: opt(Type.Array(Type.String())),
            finding_count: opt(count('Findings mapped')),
          },
          'One technical division',
        ),
      ),
    ),
    attestations: opt(
      Type.Array(
        open(
          {
            id: opt(text('9.64(C)(6), 9.64(D)(1), 9.64(D)(2) or 9.64(B)')),
            name: opt(text('What is attested')),
            state: opt(literals(['true', 'false', 'unknown'], 'From ORC_ATTEST_* configuration')),
            note: opt(Type.String({ description: 'Training item only' })),
          },
          'One attestation',
        ),
      ),
    ),
    coverage: opt(
      open(
        {
          technical_divisions_total: opt(Type.Number({ description: 'Always 5' })),
          technical_divisions_covered: opt(count('Distinct divisions present in compliance[]')),
        },
        'Coverage of the technical divisions',
      ),
    ),
  },
  'ORC 9.64 readiness (present only when enabled and licensed)',
);

export const AlertsSummaryBlock = open(
  {
    evaluated_at: opt(nullable(timestamp('When the alert rules ran'))),
    total_triggered: opt(count('Alerts triggered')),
    alerts_triggered: opt(
      Type.Array(
        open(
          {
            // new_kev: written by clients before the known-exploited alert became part of new_critical.
            type: opt(literals(['risk_threshold', 'new_critical', 'new_kev', 'scan_complete'], 'Alert rule')),
            timestamp: opt(timestamp('When it fired')),
            message: opt(text('Alert text')),
            channels_notified: opt(Type.Array(Type.String())),
          },
          'One alert',
        ),
      ),
    ),
    config: opt(
      open(
        {
          risk_threshold: opt(Type.Number({ description: 'Score at which risk_threshold fires' })),
          on_new_critical: opt(Type.Boolean()),
          on_scan_complete: opt(Type.Boolean()),
          channels: opt(Type.Array(Type.String())),
        },
        'Alert configuration',
      ),
    ),
  },
  'Scan-time alerts',
);

const BenchmarkMetric = open(
  {
    value: opt(Type.Number()),
    percentile: opt(Type.Number({ minimum: 0, maximum: 100, description: 'Higher is better' })),
    label: opt(Type.String()),
    direction: opt(literals(['lower_is_better'], 'Direction of the metric')),
  },
  'One benchmark metric',
);

export const BenchmarkBlock = open(
  {
    sample_size: opt(count('Sessions in the comparison')),
    fetched_at: opt(timestamp('When the benchmark was fetched')),
    metrics: opt(
      open(
        {
          risk_score: opt(BenchmarkMetric),
          findings_per_host: opt(BenchmarkMetric),
          critical_high_ratio: opt(BenchmarkMetric),
        },
        'Metrics',
      ),
    ),
  },
  "The scanner's copy of GET /api/benchmark",
);

const SessionFileBody = open(
  {
    session_id: opt(SessionIdField),
    target: opt(text('Older place of metadata.target')),
    metadata: opt(SessionFileMetadata),
    summary: opt(SessionFileSummary),
    findings: opt(Type.Array(Finding)),
    hosts: opt(Type.Array(Type.Unknown(), { description: 'Hosts scanned (older files)' })),
    remediation: opt(Type.Array(RemediationEntry, { description: 'Open remediation items' })),
    remediation_resolved: opt(
      Type.Array(RemediationEntry, { description: 'Items of the prior session no longer detected' }),
    ),
    remediation_not_checked: opt(
      Type.Array(RemediationEntry, {
        description:
          'Open items of earlier sessions this session did not look at (their host, port or transport was not covered): still open',
      }),
    ),
    coverage: opt(CoverageBlock),
    compliance: opt(Type.Array(ComplianceEntry)),
    topology: opt(Topology),
    orc_964: opt(Orc964Block),
    alerts_summary: opt(AlertsSummaryBlock),
    benchmark: opt(BenchmarkBlock),
  },
  'session_results.json',
);

/** The whole file: its blocks, and a session id in metadata or (very old files) at the top. */
export const SessionFile = Type.Intersect(
  [
    SessionFileBody,
    Type.Union([
      Type.Object({ metadata: Type.Object({ session_id: SessionIdField }) }, { description: 'Session id in metadata' }),
      Type.Object({ session_id: SessionIdField }, { description: 'Session id at the top level (very old files)' }),
    ]),
  ],
  {
    title: 'Scanner session file (session_results.json)',
    description: 'Every block optional except the session id; unknown fields allowed (docs/api.md#compatibility)',
  },
);
export type SessionFile = Static<typeof SessionFile>;
