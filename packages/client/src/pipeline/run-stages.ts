import { complianceSummaryOf, remediationSummaryOf, type SessionFile } from '@svc/protocol';
import type { ClientTier } from '../license/format.ts';
import { gate } from '../license/gates.ts';
import type { LicenseState } from '../license/tier.ts';
import { mapCompliance } from './compliance.ts';
import { applyExceptions, type ExceptionRule } from './exceptions.ts';
import { normalizeFindings } from './findings.ts';
import { licenseMetadata } from './license-metadata.ts';
import { applyOrc964, type OrcSettings } from './orc964.ts';
import { priorSessionId, priorTarget, trackRemediation } from './remediation.ts';
import { schedulingMetadata, type Schedule } from './scheduling.ts';
import { scoreSession } from './scoring.ts';
import { buildTopology } from './topology.ts';
import type { HostInfo, ScanFinding } from './types.ts';

/**
 * Composes the stages into one complete session document (D19: pure, no I/O, the clock passed
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
  /** Runs each named stage; the session directory passes one that measures it for pipeline.log. */
  time?: StageTimer | undefined;
}

export type StageTimer = <T>(stage: string, run: () => T) => T;
const untimed: StageTimer = (_stage, run) => run();

export interface StagesResult {
  doc: SessionFile;
  warnings: string[];
}

export function runStages(input: StagesInput): StagesResult {
  const { settings, now } = input;
  const time = input.time ?? untimed;
  const warnings: string[] = [];
  const warn = (m: string) => void warnings.push(m);
  const day = now.toISOString().slice(0, 10);
  const findings = time('findings', () => normalizeFindings(input.findings));

  let remediation: ReturnType<typeof trackRemediation> | null = null;
  if (gate(input.license.tier, 'remediation', warn)) {
    // Tracking compares scans of one target; a prior file of another target (the caller picked
    // the wrong one) would mark every finding of both as resolved or persistent by accident.
    const otherTarget = priorTarget(input.prior);
    const sameTarget = otherTarget === null || otherTarget.trim() === settings.target.trim();
    if (!sameTarget)
      warn(
        `The prior session ${priorSessionId(input.prior) ?? '(no id)'} scanned ${otherTarget}, not ${settings.target}: remediation tracking starts afresh`,
      );
    const tracked = time('remediation', () =>
      trackRemediation({ findings, prior: sameTarget ? input.prior : null, sessionId: settings.sessionId, now }),
    );
    remediation = {
      ...tracked,
      remediation: time('exceptions', () => applyExceptions(tracked.remediation, input.exceptions, day)),
    };
  }
  const { summary, exception_summary } = time('scoring', () =>
    scoreSession(findings, input.hosts, remediation?.remediation ?? null, day),
  );

  const compliancePermitted = gate(input.license.tier, 'compliance', warn);
  const orc = compliancePermitted
    ? time('compliance', () => applyOrc964(mapCompliance(findings), settings.orc, true))
    : null;
  if (!compliancePermitted && settings.orc.enabled)
    warn('Skipping the ORC 9.64 block: it needs the compliance permission');
  const topology = time('topology', () => buildTopology(input.hosts, findings));
  const license = licenseMetadata(input.license.state);

  const doc: SessionFile = {
    metadata: {
      session_id: settings.sessionId,
      target: settings.target,
      ...(settings.clientId === undefined ? {} : { client_id: settings.clientId }),
      ...(settings.client === undefined ? {} : { client: settings.client }),
      tool_version: settings.toolVersion,
      ...(settings.scanProfile === undefined ? {} : { scan_profile: settings.scanProfile }),
      started_at: settings.startedAt.toISOString(),
      finished_at: now.toISOString(),
      risk_score_operational: summary.risk_score_operational,
      risk_grade_operational: summary.risk_grade_operational,
      has_topology: topology.nodes.length > 0,
      ...(remediation === null
        ? {}
        : { remediation_summary: remediationSummaryOf(remediation.remediation, remediation.remediation_resolved) }),
      exception_summary,
      ...(orc === null ? {} : { compliance_summary: complianceSummaryOf(orc.compliance) }),
      ...schedulingMetadata(settings.target, settings.schedule),
      ...(license === null ? {} : { license }),
    },
    summary,
    findings,
    ...(remediation === null
      ? {}
      : { remediation: remediation.remediation, remediation_resolved: remediation.remediation_resolved }),
    ...(orc === null ? {} : { compliance: orc.compliance }),
    topology,
    ...(orc?.orc_964 ? { orc_964: orc.orc_964 } : {}),
  };
  return { doc, warnings };
}
