import { Value } from '@sinclair/typebox/value';
import { coversPlace, type Framework, riskScore, SessionFile, sessionCoverage, severityCounts } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import { CONTROL_NAMES } from '../src/pipeline/compliance-map.ts';
import { stagedDocs, withDecisions } from '../src/synthetic/chain.ts';
import { parseMix } from '../src/synthetic/options.ts';

/**
 * The synthetic generator's scans, session after session, through the stages: each document is
 * the pipeline's (tracking, exceptions, scoring, compliance from the one mapping table), and each
 * run's prior is the previous document with the consultant's decisions applied.
 */
describe('stages over a synthetic collection', () => {
  const options = {
    target: '10.20.0.0/24',
    sessions: 4,
    findings: 30,
    mix: parseMix('critical:10,high:20,medium:40,low:20,info:10'),
    intervalMs: 86_400_000,
    trend: 'improving' as const,
    exceptions: 2,
    seed: 7,
    seeded: true,
    now: new Date('2025-01-07T00:00:00Z'),
  };

  it('tracks findings across sessions by fingerprint and every document validates', () => {
    let prior: SessionFile | null = null;
    let runs = 0;
    for (const { session, doc } of stagedDocs(options)) {
      expect(Value.Check(SessionFile, doc)).toBe(true);
      expect(doc.summary!.total_findings).toBe(session.totalFindings);
      expect(doc.summary!.risk_score).toBe(session.riskScore);
      expect(doc.summary!.risk_score).toBe(riskScore(severityCounts(session.findings)));
      const before = new Set((prior?.remediation ?? []).map((r) => r.fingerprint));
      const now = new Set(doc.findings!.map((f) => f.fingerprint));
      expect(now.size).toBe(doc.findings!.length);
      expect(doc.remediation!.map((r) => r.status === 'new')).toStrictEqual(
        doc.findings!.map((f) => !before.has(f.fingerprint)),
      );
      expect(doc.remediation_resolved!.map((r) => r.fingerprint).sort()).toStrictEqual(
        [...before].filter((fp) => !now.has(fp)).sort(),
      );
      // What the generator pretends to have scanned: every host of the collection, the catalogue's
      // ports; so every dropped issue is resolved and none is left unchecked.
      expect(doc.coverage).toMatchObject({
        hosts: [...new Set(session.hosts.map((h) => h.ip))].sort(),
        profile: 'synthetic',
        source: 'synthetic',
      });
      for (const f of doc.findings!)
        if (f.port !== undefined)
          expect(coversPlace(sessionCoverage(doc), { host: f.host!, port: f.port, protocol: f.protocol ?? null })).toBe(
            true,
          );
      expect(doc.remediation_not_checked).toBeUndefined();
      // Decisions on the prior are carried over by the remediation stage.
      const decided = new Map(session.decisions.map((d) => [d.fingerprint, d.status]));
      for (const r of doc.remediation!) {
        const d = decided.get(r.fingerprint ?? '');
        if (d !== undefined) expect(r.status).toBe(d);
      }
      expect(doc.remediation!.filter((r) => r.exception_status === 'accepted')).toHaveLength(2);
      for (const row of doc.compliance!)
        expect(row.control_name).toBe(CONTROL_NAMES[row.framework as Framework][row.control_id ?? '']);
      expect((doc.metadata as Record<string, unknown>)['synthetic']).toMatchObject({
        seed: 7,
        sequence: runs + 1,
        sessions: 4,
      });
      prior = doc;
      runs++;
    }
    expect(runs).toBe(4);
  });

  it('withDecisions sets status, note and status_changed only where the status changes', () => {
    const prior = {
      metadata: { session_id: '20250101_000000' },
      remediation: [
        { title: 'a', fingerprint: 'a'.repeat(64), status: 'new', status_changed: 't0', note: '' },
        { title: 'b', fingerprint: 'b'.repeat(64), status: 'in_progress', status_changed: 't0', note: 'kept' },
        { title: 'c', fingerprint: 'c'.repeat(64), status: 'new', status_changed: 't0', note: '' },
      ],
    } as SessionFile;
    const at = new Date('2025-01-02T12:00:00.400Z');
    const out = withDecisions(
      prior,
      [
        { fingerprint: 'a'.repeat(64), status: 'deferred', note: 'Risk accepted' },
        { fingerprint: 'b'.repeat(64), status: 'in_progress', note: 'Assigned for remediation' },
      ],
      at,
    );
    expect(out!.remediation!.map((r) => [r.status, r.note, r.status_changed])).toStrictEqual([
      ['deferred', 'Risk accepted', '2025-01-02T12:00:00Z'],
      ['in_progress', 'kept', 't0'],
      ['new', '', 't0'],
    ]);
    expect(withDecisions(null, [], at)).toBeNull();
    expect(prior.remediation![0]!.status).toBe('new');
  });
});
