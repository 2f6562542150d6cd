import { createHash } from 'node:crypto';
import { complianceSummaryOf, remediationSummaryOf } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import { pipelineData } from '../../../bench/pipeline/data.ts';
import { ALERT_DEFAULTS } from '../src/alerts/settings.ts';
import { evaluateAlerts } from '../src/alerts/evaluate.ts';
import { mapCompliance } from '../src/pipeline/compliance.ts';
import { applyExceptions } from '../src/pipeline/exceptions.ts';
import { normalizeFindings } from '../src/pipeline/findings.ts';
import { runStages } from '../src/pipeline/run-stages.ts';
import { trackRemediation } from '../src/pipeline/remediation.ts';
import { scoreSession } from '../src/pipeline/scoring.ts';
import { buildTopology } from '../src/pipeline/topology.ts';

/**
 * The stages' output for a seeded 2,000-finding scan on 200 hosts (the pipeline benchmark's
 * generator), pinned by digest: speed work on the stages must leave every byte as it was.
 * The digests were computed with the straightforward implementations before any of it, and
 * re-pinned once when the score became bounded by the worst finding and the compliance ids
 * moved to each framework's own list (docs/scoring.md, docs/compliance.md): the only
 * differences were risk scores and grades, compliance rows and their summary. Re-pinned again
 * for the findings of record: remediation entries gained `port`/`protocol`,
 * resolved ones `resolved_at`, exception_summary the operational score and grade, metadata
 * disposition_summary, and scoreSession's result the triage blocks; with those fields left
 * out, every entry, summary and score was byte for byte the same as before.
 */

const digest = (v: unknown) => createHash('sha256').update(JSON.stringify(v)).digest('hex');

describe('pipeline stages at size (2,000 findings, 200 hosts)', () => {
  const { input } = pipelineData({ findings: 2000, hosts: 200, seed: 2000 });
  const findings = normalizeFindings(input.findings);
  const day = input.now.toISOString().slice(0, 10);

  it('normalizeFindings', () => {
    expect(findings).toHaveLength(2000);
    expect(digest(findings)).toBe('9732dbb5331e2c1f20e5a0a0bbde8a690d02be2993bfe3a868b5fade9d18f243');
  });

  it('mapCompliance', () => {
    const rows = mapCompliance(findings);
    expect(rows.length).toBeGreaterThan(20);
    expect(digest(rows)).toBe('787b0f18fe014e765a5f8521331f5bea4c40d4ae4348fb5260b0ced154ad4112');
  });

  it('buildTopology', () => {
    const topology = buildTopology(input.hosts, findings);
    expect(topology.nodes).toHaveLength(200);
    expect(digest(topology)).toBe('12f9c02f78aea22100c6aac999e29742971a1366d051049ec300623c1d79352a');
  });

  it('trackRemediation, applyExceptions and scoreSession', () => {
    const tracked = trackRemediation({
      findings,
      prior: input.prior,
      sessionId: input.settings.sessionId,
      now: input.now,
    });
    const remediation = applyExceptions(tracked.remediation, input.exceptions, day);
    expect(tracked.remediation_resolved.length).toBeGreaterThan(100);
    expect(digest([remediation, tracked.remediation_resolved])).toBe(
      '3488fdeb7d1720e46d7b90902a567b07952442c40b5872963ccb337f12442104',
    );
    const tracked2 = { remediation, remediation_resolved: tracked.remediation_resolved };
    expect(digest(scoreSession(findings, input.hosts, tracked2, day))).toBe(
      'ef2a9cf8b2bb47a3dcd6b20f2a102495277f247b9f21cd325235d68f979b3eaa',
    );
    expect(digest(remediationSummaryOf(remediation, tracked.remediation_resolved))).toBe(
      'e9c039aeaa671f3510e1b4e2389fdab89eba7b120aad6edb0821f09cb7657a55',
    );
  });

  it('runStages, its compliance summary and the alerts', () => {
    const { doc, warnings } = runStages(input);
    expect(warnings).toEqual([]);
    expect(digest(doc)).toBe('f0e86eb7d0eaf0ddb9c9fa900997abe93ed74982c6183721124a56e5aa8e4a55');
    expect(digest(complianceSummaryOf(doc.compliance))).toBe(
      'b3aa5cec6f7bb96a9a2eb1207bbfe1cbcef4501d47923a46bd1deb6111af1753',
    );
    const prior = input.prior as Parameters<typeof evaluateAlerts>[1];
    expect(digest(evaluateAlerts(doc, prior, ALERT_DEFAULTS, input.now))).toBe(
      '1edd3da69e2974a8df2041cf7c0d983cfdb8d1400acb06eadebff919f546c3b3',
    );
  });
});
