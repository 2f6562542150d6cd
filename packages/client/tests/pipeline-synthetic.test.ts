import { Value } from '@sinclair/typebox/value';
import { SessionFile, type Finding } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import { parseMix } from '../src/synthetic/options.ts';
import { planCollection } from '../src/synthetic/generate.ts';
import { orcSettingsFrom } from '../src/pipeline/orc964.ts';
import { runStages } from '../src/pipeline/run-stages.ts';

/** The synthetic generator's findings, session after session, through the stages (each run's output is the next one's prior). */
describe('stages over a synthetic collection', () => {
  it('tracks findings across sessions and every document validates', () => {
    const collection = planCollection({
      target: '10.20.0.0/24',
      sessions: 4,
      findings: 30,
      mix: parseMix('critical:10,high:20,medium:40,low:20,info:10'),
      intervalMs: 86_400_000,
      trend: 'improving',
      exceptions: 0,
      seed: 7,
      seeded: true,
      now: new Date('2025-01-07T00:00:00Z'),
    });
    let prior: SessionFile | null = null;
    let runs = 0;
    for (const s of collection.sessions) {
      const findings = (s.doc['findings'] as Finding[]).map(({ id: _id, ...f }) => f);
      const now = new Date(String((s.doc['metadata'] as Record<string, unknown>)['finished_at']));
      const { doc, warnings } = runStages({
        findings,
        hosts: [],
        prior,
        exceptions: [],
        now,
        license: { tier: 'msp', state: null },
        settings: {
          sessionId: s.sessionId,
          target: '10.20.0.0/24',
          toolVersion: 'test',
          startedAt: new Date(now.getTime() - 60_000),
          schedule: null,
          orc: orcSettingsFrom({ ORC_964_ENABLED: 'true' }),
        },
      });
      expect(warnings).toEqual([]);
      expect(Value.Check(SessionFile, doc)).toBe(true);
      const key = (f: { title?: string | undefined; host?: string | undefined }) => `${f.title}@${f.host}`;
      const before = new Set((prior?.findings ?? []).map(key));
      const now_ = new Set(findings.map(key));
      expect(doc.remediation!.map((r) => r.status === 'new')).toEqual(findings.map((f) => !before.has(key(f))));
      expect(doc.remediation_resolved!.map(key).sort()).toEqual([...before].filter((k) => !now_.has(k)).sort());
      expect(doc.summary!.total_findings).toBe(s.totalFindings);
      expect(doc.summary!.risk_score).toBe(s.riskScore);
      prior = doc;
      runs++;
    }
    expect(runs).toBe(4);
  });
});
