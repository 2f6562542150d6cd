import type { Severity } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import { applyExceptions, parseExceptionsFile } from '../src/pipeline/exceptions.ts';
import { normalizeFindings } from '../src/pipeline/findings.ts';
import { trackRemediation } from '../src/pipeline/remediation.ts';
import { scoreSession } from '../src/pipeline/scoring.ts';

const findings = normalizeFindings([
  { title: 'Telnet enabled', severity: 'critical', host: '10.0.0.6' },
  { title: 'SMBv1 enabled', severity: 'critical', host: '10.0.0.9' },
  { title: 'Weak TLS', severity: 'high', host: '10.0.0.9' },
]);
const rules = parseExceptionsFile(
  JSON.stringify({ exceptions: [{ title: 'Telnet enabled', reason: 'lab', approver: 'CISO', expiry: '2025-02-28' }] }),
).rules;
const remediationOn = (day: string) => ({
  remediation: applyExceptions(
    trackRemediation({ findings, prior: null, sessionId: 's1', now: new Date(`${day}T12:00:00Z`) }).remediation,
    rules,
    day,
  ),
  remediation_resolved: [],
});

describe('dual scoring', () => {
  it('an active exception lowers the operational score only', () => {
    // weighted 25, floor 60 (a critical) -> 76 (D); operational: one critical left, weighted 15 -> 70 (D)
    const { summary, exception_summary } = scoreSession(
      findings,
      [{ ip: '10.0.0.1' }],
      remediationOn('2025-02-28'),
      '2025-02-28',
    );
    expect(summary).toEqual({
      risk_score: 76,
      risk_grade: 'D',
      risk_score_operational: 70,
      risk_grade_operational: 'D',
      exception_impact: {
        excepted_count: 1,
        score_delta: 6,
        excepted_findings: { critical: 1, high: 0, medium: 0, low: 0, info: 0 },
      },
      total_findings: 3,
      total_hosts: 3,
      severity_counts: { critical: 2, high: 1, medium: 0, low: 0, info: 0 },
    });
    expect(exception_summary).toEqual({
      total_exceptions: 1,
      by_status: { accepted: 1, expired: 0 },
      score_delta: 6,
      risk_score_operational: 70,
      risk_grade_operational: 'D',
    });
  });

  it('an expired exception counts again', () => {
    const { summary, exception_summary } = scoreSession(findings, [], remediationOn('2025-03-01'), '2025-03-01');
    expect(summary).toMatchObject({
      risk_score: 76,
      risk_score_operational: 76,
      exception_impact: { excepted_count: 0, score_delta: 0 },
    });
    expect(exception_summary).toEqual({
      total_exceptions: 1,
      by_status: { accepted: 0, expired: 1 },
      score_delta: 0,
      risk_score_operational: 76,
      risk_grade_operational: 'D',
    });
  });

  it('without remediation items (gate closed) both scores are equal', () => {
    const { summary } = scoreSession(findings, [], null, '2025-02-28');
    expect([summary.risk_score, summary.risk_score_operational, summary.exception_impact.excepted_count]).toEqual([
      76, 76, 0,
    ]);
  });
});

describe('the worst open finding bounds the session score (docs/scoring.md)', () => {
  const scoreOf = (...severities: Severity[]) =>
    scoreSession(
      normalizeFindings(severities.map((severity, i) => ({ title: `t${i}`, severity, host: `10.0.0.${i + 1}` }))),
      [],
      null,
      '2025-03-01',
    ).summary;

  it('one critical: at least the default alert threshold 60, grade D or F', () => {
    const s = scoreOf('critical');
    expect(s.risk_score).toBeGreaterThanOrEqual(60);
    expect(['D', 'F']).toContain(s.risk_grade);
    expect(scoreOf('critical', 'info', 'info').risk_grade).toBe('D');
  });

  it('one high, or one medium: grade C at best', () => {
    expect(scoreOf('high').risk_grade).toBe('C');
    expect(scoreOf('medium', 'low').risk_grade).toBe('C');
  });

  it('only low and info findings grade A or B', () => {
    expect(scoreOf('low', 'info').risk_grade).toBe('A');
    expect(scoreOf(...Array.from({ length: 25 }, (): Severity => 'low')).risk_grade).toBe('B');
  });
});
