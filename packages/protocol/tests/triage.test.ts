import { describe, expect, it } from 'vitest';
import { riskScore, type TriageFact, triageSummary, triageSummaryOfDoc } from '../src/index.ts';

const fact = (f: Partial<TriageFact>): TriageFact => ({
  status: 'new',
  inScan: true,
  severity: 'high',
  scoreSeverity: 'high',
  exception: null,
  falsePositive: false,
  n: 1,
  ...f,
});
const counts = (c: Partial<Record<'critical' | 'high' | 'medium' | 'low' | 'info', number>>) => ({
  critical: 0,
  high: 0,
  medium: 0,
  low: 0,
  info: 0,
  ...c,
});

describe('triageSummary', () => {
  it('a false positive leaves both scores, counts apart, and is no accepted risk', () => {
    const t = triageSummary(
      [fact({ severity: 'critical', scoreSeverity: 'critical', falsePositive: true }), fact({})],
      '2026-01-01',
    );
    expect(t.scores.risk_score).toBe(riskScore(counts({ high: 1 })));
    expect(t.scores.risk_score_operational).toBe(t.scores.risk_score);
    expect(t.disposition_summary).toEqual({ false_positive: 1 });
    expect(t.exception_summary.by_status).toEqual({ accepted: 0, expired: 0 });
    expect(t.remediation_summary.total).toBe(2);
  });

  it('an exception holds through its last day and is expired the day after, on the same rule everywhere', () => {
    const facts = [
      fact({ exception: { expiry: '2026-03-31', expired: false } }),
      fact({ severity: 'low', scoreSeverity: 'low' }),
    ];
    const on = triageSummary(facts, '2026-03-31');
    expect(on.exception_summary.by_status).toEqual({ accepted: 1, expired: 0 });
    expect(on.scores.risk_score_operational).toBe(riskScore(counts({ low: 1 })));
    const after = triageSummary(facts, '2026-04-01');
    expect(after.exception_summary.by_status).toEqual({ accepted: 0, expired: 1 });
    expect(after.scores.risk_score_operational).toBe(after.scores.risk_score);
    expect(after.exception_summary.score_delta).toBe(0);
    // Without an expiry it never expires.
    expect(
      triageSummary([fact({ exception: { expiry: null, expired: false } })], '2099-01-01').exception_summary.by_status
        .accepted,
    ).toBe(1);
  });

  it('a status never changes the scores: a finding of the session resolved since still scored', () => {
    const open = triageSummary([fact({})], '2026-01-01');
    const resolved = triageSummary([fact({ status: 'resolved' })], '2026-01-01');
    expect(resolved.scores).toEqual(open.scores);
    expect(resolved.remediation_summary.by_status.resolved).toBe(1);
    // A record this session resolved (not a finding of it) counts as resolved and scores nothing.
    const earlier = triageSummary([fact({ status: 'resolved', inScan: false })], '2026-01-01');
    expect(earlier.scores.risk_score).toBe(0);
    expect(earlier.remediation_summary.resolved_count).toBe(1);
  });

  it('reads a file: open entries, resolved entries of its own findings, and the rest', () => {
    const doc = {
      findings: [{ id: 'f-1' }, { id: 'f-2' }],
      remediation: [
        {
          finding_id: 'f-1',
          severity: 'high',
          status: 'persistent',
          exception_status: 'accepted',
          exception_expiry: '2026-12-31',
        },
      ],
      remediation_resolved: [
        { finding_id: 'f-2', severity: 'critical', status: 'resolved' },
        { title: 'gone', severity: 'medium', status: 'resolved' },
      ],
    };
    const t = triageSummaryOfDoc(doc, '2026-06-01');
    expect(t.remediation_summary).toMatchObject({ total: 3, resolved_count: 2 });
    expect(t.scores.risk_score).toBe(riskScore(counts({ critical: 1, high: 1 })));
    expect(t.scores.risk_score_operational).toBe(riskScore(counts({ critical: 1 })));
    expect(t.exception_summary).toMatchObject({ total_exceptions: 1, by_status: { accepted: 1, expired: 0 } });
  });
});
