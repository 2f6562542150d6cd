import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  complianceSummaryOf,
  dualScore,
  dualScoreOf,
  exceptionCountsOf,
  exceptionSummaryOf,
  FRAMEWORK_CONTROL_TOTALS,
  frameworkControlTotal,
  FRAMEWORKS,
  isActiveException,
  normalizedRemediationSummary,
  orc964SummaryOf,
  remediationSummaryOf,
  GRADE_CAPS,
  FRAMEWORK_CONTROL_IDS,
  isFrameworkControl,
  RISK_GRADES,
  riskGrade,
  riskScore,
  SEVERITIES,
  SEVERITY_FLOORS,
  severityCounts,
  worstSeverity,
  type BySeverity,
  type RiskGrade,
  type Severity,
} from '@svc/protocol';
import { findingFingerprint, sha256Hex } from '@svc/protocol/node';

/** The shared session-file rules of packages/protocol/src/session-file (docs/session-file.md). */

const zeros = () => ({ critical: 0, high: 0, medium: 0, low: 0, info: 0 });

describe('sha256Hex (node:crypto)', () => {
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
  const one = (s: Severity, n = 1) => ({ ...zeros(), [s]: n });

  it('scores 100 − (100 − floor of the worst open severity) × e^(−weighted/50), weights 10/5/2/0.5/0', () => {
    expect(riskScore(zeros())).toBe(0);
    expect(riskScore({ ...zeros(), info: 1000 })).toBe(0);
    expect(riskScore(one('low'))).toBe(1); // floor 0: 100 × (1 − e^(−0.01))
    expect(riskScore(one('medium'))).toBe(42); // floor 40: 100 − 60 × e^(−0.04)
    expect(riskScore(one('high'))).toBe(46); // floor 40: 100 − 60 × e^(−0.1)
    expect(riskScore(one('critical'))).toBe(67); // floor 60: 100 − 40 × e^(−0.2)
    expect(riskScore({ critical: 2, high: 3, medium: 6, low: 3, info: 1 })).toBe(85);
    expect(riskScore(one('critical', 100))).toBe(100);
  });

  it('one open critical scores at least the default alert threshold (60) and grades D or F', () => {
    for (const extra of [zeros(), one('info', 50), one('low', 3)]) {
      const counts = { ...extra, critical: 1 };
      expect(riskScore(counts)).toBeGreaterThanOrEqual(60);
      expect(['D', 'F']).toContain(riskGrade(riskScore(counts)));
    }
    expect(riskGrade(riskScore(one('critical')))).toBe('D');
    expect(riskGrade(riskScore(one('critical', 4)))).toBe('F');
  });

  it('one open high grades C at best; so does one open medium', () => {
    expect(riskGrade(riskScore(one('high')))).toBe('C');
    expect(riskGrade(riskScore(one('medium')))).toBe('C');
    expect(riskGrade(riskScore({ ...one('high'), low: 1, info: 3 }))).toBe('C');
    expect(riskGrade(riskScore(one('high', 4)))).toBe('D'); // volume still counts
  });

  it('only low and info findings grade A or B', () => {
    expect(riskGrade(riskScore(one('low')))).toBe('A');
    expect(riskGrade(riskScore({ ...one('low', 21), info: 9 }))).toBe('A');
    expect(riskGrade(riskScore(one('low', 23)))).toBe('B');
    expect(riskGrade(riskScore(one('info', 500)))).toBe('A');
    // Over a grid of counts, A or B appears exactly when nothing above low is open.
    for (const c of countGrid()) {
      const aOrB = ['A', 'B'].includes(riskGrade(riskScore(c)));
      if (c.medium + c.high + c.critical > 0) expect(aOrB, JSON.stringify(c)).toBe(false);
    }
  });

  it('the grade is never better than the cap of the worst open severity', () => {
    const rank = (g: string) => RISK_GRADES.indexOf(g as RiskGrade);
    for (const c of countGrid()) {
      const worst = worstSeverity(c);
      const g = riskGrade(riskScore(c));
      if (worst !== null) expect(rank(g), JSON.stringify(c)).toBeGreaterThanOrEqual(rank(GRADE_CAPS[worst]));
    }
  });

  it('is monotone: one more finding of any severity never lowers the score, and a weighted one raises it until 100', () => {
    for (const c of countGrid())
      for (const s of SEVERITIES) {
        const before = riskScore(c);
        const after = riskScore({ ...c, [s]: c[s] + 1 });
        expect(after, `${JSON.stringify(c)} + ${s}`).toBeGreaterThanOrEqual(before);
      }
    // Volume: ten criticals score above one, twenty lows above one.
    expect(riskScore(one('critical', 10))).toBeGreaterThan(riskScore(one('critical')));
    expect(riskScore(one('low', 20))).toBeGreaterThan(riskScore(one('low')));
  });

  it('grades A < 20 ≤ B < 40 ≤ C < 60 ≤ D < 80 ≤ F at every band edge', () => {
    const cases: [number, string][] = [
      [0, 'A'],
      [19, 'A'],
      [20, 'B'],
      [39, 'B'],
      [40, 'C'],
      [59, 'C'],
      [60, 'D'],
      [79, 'D'],
      [80, 'F'],
      [100, 'F'],
    ];
    for (const [score, grade] of cases) expect(riskGrade(score), String(score)).toBe(grade);
    // A severity's floor is the lowest score of the best grade it allows.
    for (const s of SEVERITIES) expect(riskGrade(SEVERITY_FLOORS[s])).toBe(GRADE_CAPS[s]);
  });
});

/** Every count from 0 to 4 per severity above info, and info 0 or 2 (1250 combinations). */
function countGrid(): BySeverity[] {
  const out: BySeverity[] = [];
  for (let critical = 0; critical <= 4; critical++)
    for (let high = 0; high <= 4; high++)
      for (let medium = 0; medium <= 4; medium++)
        for (let low = 0; low <= 4; low++) for (const info of [0, 2]) out.push({ critical, high, medium, low, info });
  return out;
}

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
    // Actual: 2 critical, 2 high, 1 medium (weighted 32, floor 60) is 79; operational drops one critical (22): 74.
    expect(dualScoreOf(entries, '2025-03-01')).toStrictEqual({
      risk_score: 79,
      risk_grade: 'D',
      risk_score_operational: 74,
      risk_grade_operational: 'D',
      exception_impact: { excepted_count: 1, score_delta: 5, excepted_findings: { ...zeros(), critical: 1 } },
    });
  });

  it('an excepted critical bounds the actual score only: actual D at 68, operational A at 1', () => {
    const entries = [entry('critical', { exception_status: 'accepted', exception_expiry: '2025-12-31' }), entry('low')];
    const s = dualScoreOf(entries, '2025-03-01');
    expect([s.risk_score, s.risk_grade, s.risk_score_operational, s.risk_grade_operational]).toStrictEqual([
      68,
      'D',
      1,
      'A',
    ]);
    expect(s.exception_impact.score_delta).toBe(67);
  });

  it('without exceptions both scores agree and the delta is 0', () => {
    const counts = { critical: 1, high: 1, medium: 1, low: 1, info: 1 };
    expect(dualScore(counts, zeros())).toStrictEqual({
      risk_score: 72,
      risk_grade: 'D',
      risk_score_operational: 72,
      risk_grade_operational: 'D',
      exception_impact: { excepted_count: 0, score_delta: 0, excepted_findings: zeros() },
    });
  });
});

describe('frameworks', () => {
  it("names the five frameworks; each total is the length of the framework's own list", () => {
    expect(FRAMEWORKS).toStrictEqual(['CIS Controls v8', 'NIST CSF', 'PCI-DSS v4.0', 'SOC 2', 'ORC 9.64']);
    // CIS: 153 safeguards; NIST CSF 2.0: 106 subcategories; PCI DSS 4.0: 63 x.y requirements;
    // SOC 2: 33 common criteria; ORC 9.64: its 5 technical divisions.
    expect(FRAMEWORK_CONTROL_TOTALS).toStrictEqual({
      'CIS Controls v8': 153,
      'NIST CSF': 106,
      'PCI-DSS v4.0': 63,
      'SOC 2': 33,
      'ORC 9.64': 5,
    });
    for (const f of FRAMEWORKS) {
      expect(FRAMEWORK_CONTROL_IDS[f].length, f).toBe(FRAMEWORK_CONTROL_TOTALS[f]);
      expect(new Set(FRAMEWORK_CONTROL_IDS[f]).size, `${f} has no duplicate`).toBe(FRAMEWORK_CONTROL_IDS[f].length);
      expect(frameworkControlTotal(f)).toBe(FRAMEWORK_CONTROL_IDS[f].length);
    }
    expect(frameworkControlTotal('ISO 27001')).toBeNull();
    expect(frameworkControlTotal('hasOwnProperty')).toBeNull();
    expect(frameworkControlTotal('cis controls v8')).toBeNull();
  });

  it('each list is in one unit and spelling: safeguards, CSF 2.0 subcategories, x.y requirements, CCn.n', () => {
    const ids = FRAMEWORK_CONTROL_IDS;
    expect(ids['CIS Controls v8'].every((id) => /^([1-9]|1[0-8])\.([1-9]|1[0-4])$/.test(id))).toBe(true);
    expect(ids['CIS Controls v8'].slice(0, 6)).toStrictEqual(['1.1', '1.2', '1.3', '1.4', '1.5', '2.1']);
    expect(ids['CIS Controls v8'].at(-1)).toBe('18.5');
    expect(ids['NIST CSF'].every((id) => /^(GV|ID|PR|DE|RS|RC)\.[A-Z]{2}-\d{2}$/.test(id))).toBe(true);
    // Per function: Govern 31, Identify 21, Protect 22, Detect 11, Respond 13, Recover 8; 22 categories.
    const byFunction = (fn: string) => ids['NIST CSF'].filter((id) => id.startsWith(`${fn}.`)).length;
    expect(['GV', 'ID', 'PR', 'DE', 'RS', 'RC'].map(byFunction)).toStrictEqual([31, 21, 22, 11, 13, 8]);
    expect(new Set(ids['NIST CSF'].map((id) => id.slice(0, 5))).size).toBe(22);
    expect(ids['NIST CSF']).toContain('PR.AA-01');
    expect(ids['NIST CSF']).not.toContain('ID.AM-06'); // withdrawn in 2.0
    expect(ids['NIST CSF']).not.toContain('PR.AC-1'); // a CSF 1.1 id
    expect(ids['PCI-DSS v4.0'].every((id) => /^([1-9]|1[0-2])\.([1-9]|10)$/.test(id))).toBe(true);
    expect(ids['PCI-DSS v4.0'].filter((id) => id.startsWith('12.'))).toHaveLength(10);
    expect(ids['SOC 2'].every((id) => /^CC[1-9]\.[1-8]$/.test(id))).toBe(true);
    expect(ids['SOC 2'].at(-1)).toBe('CC9.2');
    expect(ids['ORC 9.64']).toStrictEqual(['9.64(C)(1)', '9.64(C)(2)', '9.64(C)(3)', '9.64(C)(4)', '9.64(C)(5)']);
    expect(isFrameworkControl('NIST CSF', 'PR.AA-01')).toBe(true);
    expect(isFrameworkControl('NIST CSF', 'PR.AC-1')).toBe(false);
    expect(isFrameworkControl('Own', 'X')).toBe(false);
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
        { framework: 'SOC 2', mapped_controls: 1, total_controls: 33, gap_controls: 32, findings_count: 3 },
        { framework: 'ORC 9.64', mapped_controls: 1, total_controls: 5, gap_controls: 4, findings_count: 1 },
        { framework: 'Own', mapped_controls: 1, total_controls: null, gap_controls: null, findings_count: 0 },
      ],
    });
  });

  it('compliance_summary counts as mapped only ids of the framework list, so the gap is total − mapped', () => {
    // A file written before the lists were aligned: CSF 1.1 ids and a CIS control number.
    const entries = [
      { framework: 'NIST CSF', control_id: 'PR.AC-1', finding_ids: ['f-1'] },
      { framework: 'NIST CSF', control_id: 'PR.AA-01', finding_ids: ['f-2'] },
      { framework: 'CIS Controls v8', control_id: '4', finding_ids: ['f-1'] },
      { framework: 'CIS Controls v8', control_id: '4.7', finding_ids: ['f-1'] },
      { framework: 'CIS Controls v8', control_id: '3.10', finding_ids: ['f-3'] },
    ];
    expect(complianceSummaryOf(entries).by_framework).toStrictEqual([
      { framework: 'NIST CSF', mapped_controls: 1, total_controls: 106, gap_controls: 105, findings_count: 2 },
      { framework: 'CIS Controls v8', mapped_controls: 2, total_controls: 153, gap_controls: 151, findings_count: 2 },
    ]);
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
