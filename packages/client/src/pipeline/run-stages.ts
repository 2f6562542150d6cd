import {
  type CoverageBlock,
  complianceSummaryOf,
  type SessionFile,
  sessionCoverage,
  type VulnIndex,
} from '@svc/protocol';
import type { ClientTier } from '../kit/license/format.ts';
import { gate } from '../kit/license/gates.ts';
import type { LicenseState } from '../kit/license/tier.ts';
import { mapCompliance } from './compliance.ts';
import { applyExceptions, type ExceptionRule } from './exceptions.ts';
import { normalizeFindings } from './findings.ts';
import { licenseMetadata } from './license-metadata.ts';
import { applyOrc964, type OrcSettings } from './orc964.ts';
import { priorSessionId, priorTarget, trackRemediation } from './remediation.ts';
import { schedulingMetadata, type Schedule } from '../kit/scheduling.ts';
import { scoreSession } from './scoring.ts';
import { buildTopology } from './topology.ts';
import type { HostInfo, ScanFinding } from './types.ts';
import { enrichFindings } from './vuln-enrich.ts';

/**
 * Composes the stages into one complete session document (docs/scanner/stages.md: pure, no I/O, the clock passed
 * in). Licensing never fails a run: a closed gate (remediation, compliance) adds a warning and
 * that part is skipped; ORC 9.64 needs the compliance permission too.
 */

export interface RunSettings {
  sessionId: string;
  target: string;
  clientId?: string | undefined;
  client?: string | undefined;
  toolVersion: string;
  scanProfile?: string | undefined;
  startedAt: Date;
  /** A random id of this scan run (32 hex): what tells two scans that got one session id apart at upload. */
  runId?: string | undefined;
  schedule: Schedule | null;
  orc: OrcSettings;
}

export interface StagesInput {
  findings: readonly ScanFinding[];
  hosts: readonly HostInfo[];
  /** The prior session file of the same target, or null. */
  prior: unknown;
  exceptions: readonly ExceptionRule[];
  settings: RunSettings;
  /** The tier the license module resolved for this run ('' = community) and its state for metadata.license. */
  license: { tier: ClientTier; state: LicenseState | null };
  /** End of the scan: status changes, exception expiry (its UTC day) and finished_at. */
  now: Date;
  /**
   * Runs each stage (named as in pipeline.log) and may time it; the stages stay pure because
   * the caller owns the clock. By default each stage just runs.
   */
  measure?: Measure;
  /** CVSS, KEV and EPSS for every finding naming a CVE it knows (vuln-enrich.ts); none when absent. */
  vulnIndex?: VulnIndex | null | undefined;
  /**
   * What the run looked at (coverage-builder.ts): written into the document, and the rule for
   * which prior findings it resolves. Absent: the hosts of the findings and `hosts`, every port
   * of each (the protocol's inference for files without a block).
   */
  coverage?: CoverageBlock | undefined;
}

export type Measure = <T>(stage: string, work: () => T) => T;

const unmeasured: Measure = (_stage, work) => work();

export interface StagesResult {
  doc: SessionFile;
  warnings: string[];
}

export function runStages(input: StagesInput): StagesResult {
  const { settings, now } = input;
  const measure = input.measure ?? unmeasured;
  const warnings: string[] = [];
  const warn = (m: string) => void warnings.push(m);
  const day = now.toISOString().slice(0, 10);
  const findings = measure('findings', () => normalizeFindings(enrichFindings(input.findings, input.vulnIndex)));

  let remediation: ReturnType<typeof trackRemediation> | null = null;
  if (gate(input.license.tier, 'remediation', warn)) {
    // Tracking compares scans of one target; a prior file of another target (the caller picked
    // The wrong one) would mark every finding of both as resolved or persistent by accident.
    const otherTarget = priorTarget(input.prior);
    const sameTarget = otherTarget === null || otherTarget.trim() === settings.target.trim();
    if (!sameTarget)
      warn(
        `The prior session ${priorSessionId(input.prior) ?? '(no id)'} scanned ${otherTarget}, not ${settings.target}: remediation tracking starts afresh`,
      );
    const coverage = sessionCoverage({ coverage: input.coverage, findings, hosts: input.hosts });
    const tracked = measure('remediation', () =>
      trackRemediation({
        findings,
        prior: sameTarget ? input.prior : null,
        sessionId: settings.sessionId,
        now,
        coverage,
      }),
    );
    const excepted = measure('exceptions', () => applyExceptions(tracked.remediation, input.exceptions, day));
    remediation = { ...tracked, remediation: excepted };
  }
  const scored = measure('scoring', () => scoreSession(findings, input.hosts, remediation, day));
  const { summary } = scored;

  const compliancePermitted = gate(input.license.tier, 'compliance', warn);
  const rows = compliancePermitted ? measure('compliance', () => mapCompliance(findings)) : null;
  const orc = rows === null ? null : measure('orc_964', () => applyOrc964(rows, settings.orc, true));
  if (!compliancePermitted && settings.orc.enabled)
    warn('Skipping the ORC 9.64 block: it needs the compliance permission');
  const topology = measure('topology', () => buildTopology(input.hosts, findings));
  const scheduling = measure('scheduling', () => schedulingMetadata(settings.target, settings.schedule));
  const license = measure('license', () => licenseMetadata(input.license.state));
  const complianceSummary = measure('summaries', () => (orc === null ? null : complianceSummaryOf(orc.compliance)));

  const doc: SessionFile = {
    metadata: {
      session_id: settings.sessionId,
      target: settings.target,
      ...(settings.clientId === undefined ? {} : { client_id: settings.clientId }),
      ...(settings.client === undefined ? {} : { client: settings.client }),
      tool_version: settings.toolVersion,
      ...(settings.scanProfile === undefined ? {} : { scan_profile: settings.scanProfile }),
      started_at: settings.startedAt.toISOString(),
      ...(settings.runId === undefined ? {} : { run_id: settings.runId }),
      finished_at: now.toISOString(),
      risk_score_operational: summary.risk_score_operational,
      risk_grade_operational: summary.risk_grade_operational,
      has_topology: topology.nodes.length > 0,
      ...(scored.remediation_summary === null ? {} : { remediation_summary: scored.remediation_summary }),
      exception_summary: scored.exception_summary,
      ...(scored.disposition_summary === null ? {} : { disposition_summary: scored.disposition_summary }),
      ...(complianceSummary === null ? {} : { compliance_summary: complianceSummary }),
      ...scheduling,
      ...(license === null ? {} : { license }),
    },
    summary,
    findings,
    ...(remediation === null
      ? {}
      : {
          remediation: remediation.remediation,
          remediation_resolved: remediation.remediation_resolved,
          // Open items of earlier sessions this scan did not look at: still open, not in its numbers.
          ...(remediation.remediation_not_checked.length === 0
            ? {}
            : { remediation_not_checked: remediation.remediation_not_checked }),
        }),
    ...(input.coverage === undefined ? {} : { coverage: input.coverage }),
    ...(orc === null ? {} : { compliance: orc.compliance }),
    topology,
    ...(orc?.orc_964 ? { orc_964: orc.orc_964 } : {}),
  };
  return { doc, warnings };
}
