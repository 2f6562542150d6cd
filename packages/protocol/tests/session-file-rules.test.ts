import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  complianceSummaryOf,
  dualScore,
  dualScoreOf,
  exceptionCountsOf,
  exceptionSummaryOf,
  findingFingerprint,
  FRAMEWORK_CONTROL_TOTALS,
  frameworkControlTotal,
  FRAMEWORKS,
  isActiveException,
  normalizedRemediationSummary,
  orc964SummaryOf,
  remediationSummaryOf,
  riskGrade,
  riskScore,
  severityCounts,
  sha256Hex,
} from '@svc/protocol';

/** The shared session-file rules of packages/protocol/src/session-file (docs/session-file.md). */

const zeros = () => ({ critical: 0, high: 0, medium: 0, low: 0, info: 0 });

describe('sha256Hex (pure, for browser consumers)', () => {
  it('equals node:crypto over empty, ASCII, multi-byte and block-boundary inputs', () => {
    const inputs = ['', 'abc', 'ü€𝄞', 'a'.repeat(55), 'a'.repeat(56), 'a'.repeat(63), 'a'.repeat(64), 'x'.repeat(1000)];
    for (const s of inputs)
      expect(sha256Hex(s), JSON.stringify(s.slice(0, 10))).toBe(createHash('sha256').update(s, 'utf8').digest('hex'));
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('findingFingerprint', () => {
  const base = { rule_id: 'svc.tls.v1_0', host: '10.0.0.5', port: 443, protocol: 'tcp' };

  it('is a fixed 64-hex value for the same rule, host, port and protocol', () => {
    const fp = findingFingerprint(base);
    expect(fp).toMatch(/^[0-9a-f]{64}$/);
    expect(fp).toBe(sha256Hex(JSON.stringify(['svc-finding-v1', 'svc.tls.v1_0', '10.0.0.5', '443', 'tcp'])));
    // Stable across releases: the value recorded when the rule was made, not recomputed.
    expect(fp).toBe('4e5d640560b48d888776f0ad43e741adb113fa4d212771373091f0b5d300acb0');
  });

  it('ignores case of host and protocol and surrounding blanks', () => {
    expect(
      findingFingerprint({ rule_id: ' svc.tls.v1_0 ', host: ' WEB01.Example.ORG ', port: 443, protocol: 'TCP' }),
    ).toBe(findingFingerprint({ rule_id: 'svc.tls.v1_0', host: 'web01.example.org', port: 443, protocol: 'tcp' }));
  });

  it('differs for another rule, host, port or protocol', () => {
    const fp = findingFingerprint(base);
    expect(findingFingerprint({ ...base, rule_id: 'svc.tls.v1_1' })).not.toBe(fp);
    expect(findingFingerprint({ ...base, host: '10.0.0.6' })).not.toBe(fp);
    expect(findingFingerprint({ ...base, port: 8443 })).not.toBe(fp);
    expect(findingFingerprint({ ...base, protocol: 'udp' })).not.toBe(fp);
  });

  it('a host-level finding (no port, no protocol) is one fingerprint whether the fields are absent or null', () => {
    const a = findingFingerprint({ rule_id: 'svc.icmp.timestamp', host: '10.0.0.5' });
    expect(findingFingerprint({ rule_id: 'svc.icmp.timestamp', host: '10.0.0.5', port: null, protocol: null })).toBe(a);
    expect(findingFingerprint({ rule_id: 'svc.icmp.timestamp', host: '10.0.0.5', port: 0 })).not.toBe(a);
  });

  it('parts cannot run into each other', () => {
    expect(findingFingerprint({ rule_id: 'a', host: 'b\nc' })).not.toBe(
      findingFingerprint({ rule_id: 'a\nb', host: 'c' }),
    );
  });
});

describe('risk score and grade', () => {
  it('scores 100 × (1 − e^(−weighted/50)) with weights 10/5/2/0.5/0', () => {
    expect(riskScore(zeros())).toBe(0);
    expect(riskScore({ ...zeros(), info: 1000 })).toBe(0);
    expect(riskScore({ critical: 2, high: 3, medium: 6, low: 3, info: 1 })).toBe(62);
    expect(riskScore({ ...zeros(), critical: 5 })).toBe(63); // weighted 50: 1 − 1/e
    expect(riskScore({ ...zeros(), low: 1 })).toBe(1);
    expect(riskScore({ ...zeros(), critical: 100 })).toBe(100);
  });

  it('grades A < 20 ≤ B < 40 ≤ C < 55 ≤ D < 75 ≤ F at every band edge', () => {
    const cases: [number, string][] = [
      [0, 'A'],
      [19, 'A'],
      [20, 'B'],
      [39, 'B'],
      [40, 'C'],
      [54, 'C'],
      [55, 'D'],
      [74, 'D'],
      [75, 'F'],
      [100, 'F'],
    ];
    for (const [score, grade] of cases) expect(riskGrade(score), String(score)).toBe(grade);
  });
});

describe('operational score and exception_impact', () => {
  const entry = (severity: string, exception: Record<string, unknown> = {}) => ({
    severity,
    exception_status: null,
    exception_expiry: null,
    exception_expired: false,
    ...exception,
  });

  it('an accepted exception counts until its expiry day, inclusive; expired ones never', () => {
    const accepted = { exception_status: 'accepted', exception_expiry: '2025-03-01', exception_expired: false };
    expect(isActiveException(accepted, '2025-02-28')).toBe(true);
    expect(isActiveException(accepted, '2025-03-01')).toBe(true);
    expect(isActiveException(accepted, '2025-03-02')).toBe(false);
    expect(isActiveException({ ...accepted, exception_expired: true }, '2025-01-01')).toBe(false);
    expect(isActiveException({ ...accepted, exception_status: 'expired' }, '2025-01-01')).toBe(false);
    expect(isActiveException({ exception_status: 'accepted', exception_expiry: null }, '2999-01-01')).toBe(true);
    expect(isActiveException({ exception_status: null }, '2025-01-01')).toBe(false);
  });

  it('leaves accepted, unexpired exceptions out of the operational score only', () => {
    const entries = [
      entry('critical', { exception_status: 'accepted', exception_expiry: '2025-12-31' }),
      entry('critical', { exception_status: 'accepted', exception_expiry: '2025-01-31' }), // past expiry on the day
      entry('high', { exception_status: 'expired', exception_expiry: '2024-12-31', exception_expired: true }),
      entry('high', { exception_status: 'accepted', exception_expired: true }),
      entry('medium'),
      entry('bogus', { exception_status: 'accepted' }),
    ];
    // Actual: 2 critical, 2 high, 1 medium (weighted 32) is 47; operational drops one critical (22): 36.
    expect(dualScoreOf(entries, '2025-03-01')).toStrictEqual({
      risk_score: 47,
      risk_grade: 'C',
      risk_score_operational: 36,
      risk_grade_operational: 'B',
      exception_impact: { excepted_count: 1, score_delta: 11, excepted_findings: { ...zeros(), critical: 1 } },
    });
  });

  it('without exceptions both scores agree and the delta is 0', () => {
    const counts = { critical: 1, high: 1, medium: 1, low: 1, info: 1 };
    expect(dualScore(counts, zeros())).toStrictEqual({
      risk_score: 30,
      risk_grade: 'B',
      risk_score_operational: 30,
      risk_grade_operational: 'B',
      exception_impact: { excepted_count: 0, score_delta: 0, excepted_findings: zeros() },
    });
  });
});

describe('frameworks', () => {
  it("names SPEC's five frameworks with their control totals, ORC 9.64 at 5", () => {
    expect(FRAMEWORKS).toStrictEqual(['CIS Controls v8', 'NIST CSF', 'PCI-DSS v4.0', 'SOC 2', 'ORC 9.64']);
    expect(FRAMEWORK_CONTROL_TOTALS).toStrictEqual({
      'CIS Controls v8': 18,
      'NIST CSF': 6,
      'PCI-DSS v4.0': 12,
      'SOC 2': 5,
      'ORC 9.64': 5,
    });
    expect(frameworkControlTotal('ISO 27001')).toBeNull();
    expect(frameworkControlTotal('hasOwnProperty')).toBeNull();
    expect(frameworkControlTotal('cis controls v8')).toBeNull();
  });
});

describe('summaries', () => {
  it('remediation_summary: open entries by status (unknown is new), resolved ones as resolved, severities counted', () => {
    const open = [
      { status: 'new', severity: 'high' },
      { status: 'weird', severity: 'HIGH' },
      { status: 'deferred', severity: 'nope' },
      'x',
    ];
    const resolved = [{ status: 'in_progress', severity: 'low' }];
    expect(remediationSummaryOf(open, resolved)).toStrictEqual({
      total: 4,
      resolved_count: 1,
      by_status: { new: 2, persistent: 0, in_progress: 0, resolved: 1, deferred: 1 },
      by_severity: { ...zeros(), high: 2, low: 1 },
    });
    expect(remediationSummaryOf(undefined, 'x')).toStrictEqual(remediationSummaryOf([], []));
  });

  it("a file's own remediation_summary is normalised: wrong types are 0, totals filled in", () => {
    expect(
      normalizedRemediationSummary({ by_status: { new: 2, resolved: 3, deferred: '1' }, by_severity: { high: 5 } }),
    ).toStrictEqual({
      total: 5,
      resolved_count: 3,
      by_status: { new: 2, persistent: 0, in_progress: 0, resolved: 3, deferred: 0 },
      by_severity: { ...zeros(), high: 5 },
    });
    expect(normalizedRemediationSummary('x').total).toBe(0);
  });

  it("exception_summary: counts of open entries, the file's delta and operational score (summary before metadata)", () => {
    expect(
      exceptionCountsOf([
        { exception_status: 'accepted' },
        { exception_status: 'expired' },
        { exception_status: 'accepted' },
        { exception_status: 'other' },
      ]),
    ).toStrictEqual({ total_exceptions: 3, by_status: { accepted: 2, expired: 1 } });
    const doc = {
      metadata: { risk_score_operational: 10, risk_grade_operational: 'A' },
      summary: { risk_score_operational: 48, exception_impact: { score_delta: 14 } },
      remediation: [{ exception_status: 'accepted' }],
    };
    expect(exceptionSummaryOf(doc)).toStrictEqual({
      total_exceptions: 1,
      by_status: { accepted: 1, expired: 0 },
      score_delta: 14,
      risk_score_operational: 48,
      risk_grade_operational: 'A',
    });
    expect(exceptionSummaryOf(null)).toStrictEqual({
      total_exceptions: 0,
      by_status: { accepted: 0, expired: 0 },
      score_delta: 0,
      risk_score_operational: null,
      risk_grade_operational: null,
    });
  });

  it('compliance_summary: per framework in order of appearance, distinct controls and findings, gaps for known frameworks', () => {
    const entries = [
      { framework: 'SOC 2', control_id: 'CC6.1', finding_ids: ['f-1', 'f-2'] },
      { framework: 'ORC 9.64', control_id: '9.64(C)(1)', finding_ids: ['f-1'] },
      { framework: 'SOC 2', control_id: 'CC6.1', finding_ids: ['f-2', 3] },
      { framework: 'Own', control_id: 'X' },
      { control_id: 'no framework' },
    ];
    expect(complianceSummaryOf(entries)).toStrictEqual({
      total_mappings: 5,
      by_framework: [
        { framework: 'SOC 2', mapped_controls: 1, total_controls: 5, gap_controls: 4, findings_count: 3 },
        { framework: 'ORC 9.64', mapped_controls: 1, total_controls: 5, gap_controls: 4, findings_count: 1 },
        { framework: 'Own', mapped_controls: 1, total_controls: null, gap_controls: null, findings_count: 0 },
      ],
    });
  });

  it('compliance_summary keeps at most 50 frameworks of at most 128 characters', () => {
    const entries = [
      { framework: 'x'.repeat(129) },
      ...Array.from({ length: 60 }, (_, i) => ({ framework: `F${i}`, control_id: 'c' })),
    ];
    const s = complianceSummaryOf(entries);
    expect(s.total_mappings).toBe(61);
    expect(s.by_framework.map((f) => f.framework)).toStrictEqual(Array.from({ length: 50 }, (_, i) => `F${i}`));
  });

  it('orc964_summary: null without the block; coverage wins over mapped divisions; pending attestations', () => {
    expect(orc964SummaryOf(undefined)).toBeNull();
    expect(
      orc964SummaryOf({
        divisions: [{ mapped: true }, { mapped: false }, { mapped: 'true' }],
        attestations: [{ state: 'true' }, { state: true }, { state: 'false' }, {}],
      }),
    ).toStrictEqual({ enabled: true, technical_covered: 1, technical_total: 5, attest_pending: 2 });
    expect(orc964SummaryOf({ coverage: { technical_divisions_covered: 4 }, divisions: [] })?.technical_covered).toBe(4);
  });

  it('severityCounts counts known severities case-insensitively', () => {
    expect(severityCounts([{ severity: 'Critical' }, { severity: 'info' }, { severity: 'urgent' }, {}])).toStrictEqual({
      ...zeros(),
      critical: 1,
      info: 1,
    });
  });
});
