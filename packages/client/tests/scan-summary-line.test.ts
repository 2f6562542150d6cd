import { describe, expect, it } from 'vitest';
import { scanSummaryLine } from '../src/cli/output.ts';

/** `svc scan`'s last line: both scores under the report's names, not the actual score alone. */
describe('scanSummaryLine', () => {
  it('states the risk score and the operational risk, each with its grade', () => {
    expect(
      scanSummaryLine('20250301_140000', {
        total_findings: 12,
        total_hosts: 3,
        risk_score: 76,
        risk_grade: 'D',
        risk_score_operational: 56,
        risk_grade_operational: 'C',
      }),
    ).toBe('Session 20250301_140000: 12 findings on 3 hosts, risk score 76 (D), operational risk 56 (C)');
  });

  it('without exceptions both are the same; one is singular', () => {
    expect(
      scanSummaryLine('20250301_140000', {
        total_findings: 1,
        total_hosts: 1,
        risk_score: 10,
        risk_grade: 'A',
        risk_score_operational: 10,
        risk_grade_operational: 'A',
      }),
    ).toBe('Session 20250301_140000: 1 finding on 1 host, risk score 10 (A), operational risk 10 (A)');
  });

  it('a summary without an operational score (before dual scoring) repeats the risk score', () => {
    expect(scanSummaryLine('x', { total_findings: 0, total_hosts: 0, risk_score: 0, risk_grade: 'A' })).toBe(
      'Session x: 0 findings on 0 hosts, risk score 0 (A), operational risk 0 (A)',
    );
  });
});
