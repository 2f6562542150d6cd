import {
  dualScoreOf,
  EPSS_RAISE,
  type Finding,
  riskScore,
  scoringCounts,
  scoringSeverity,
  type SessionFile,
  severityCounts,
  type VulnIndex,
} from '@svc/protocol';
import { findingFingerprint } from '@svc/protocol/node';
import { describe, expect, it } from 'vitest';
import { evaluateAlerts, newKev } from '../src/alerts/evaluate.ts';
import { runStages, type StagesInput } from '../src/pipeline/run-stages.ts';
import { brandingFromEnv, renderExecSummary, renderReport } from '../src/report/index.ts';
import { vulnIndex } from '@svc/test-support/vuln-index';

/** docs/scoring.md and docs/vuln-matching.md: how KEV and EPSS count in the score and the alerts. */

const finding = (
  rule_id: string,
  severity: NonNullable<Finding['severity']>,
  extra: Partial<Finding> = {},
): Finding => ({
  rule_id,
  title: `Title of ${rule_id}`,
  severity,
  host: '10.0.0.5',
  port: 22,
  protocol: 'tcp',
  fingerprint: findingFingerprint({ rule_id, host: '10.0.0.5', port: 22, protocol: 'tcp' }),
  ...extra,
});

describe('the score with KEV and EPSS', () => {
  it('counts a known-exploited finding as critical and high EPSS one severity up', () => {
    expect(scoringSeverity({ severity: 'low', kev: true })).toBe('critical');
    expect(scoringSeverity({ severity: 'medium', epss: EPSS_RAISE })).toBe('high');
    expect(scoringSeverity({ severity: 'high', epss: 0.9 })).toBe('critical');
    expect(scoringSeverity({ severity: 'critical', epss: 0.9 })).toBe('critical');
    expect(scoringSeverity({ severity: 'medium', epss: 0.099 })).toBe('medium');
    expect(scoringSeverity({ severity: 'info', kev: true, epss: 0.9 })).toBe('info');
    expect(scoringSeverity({ severity: 'high', kev: false })).toBe('high');
    expect(scoringSeverity({ kev: true })).toBeNull();
  });

  it('one low known-exploited finding scores like a critical: 67, grade D', () => {
    expect(riskScore(scoringCounts([{ severity: 'low', kev: true }]))).toBe(67);
    expect(riskScore(scoringCounts([{ severity: 'low' }]))).toBe(1);
    // One medium with EPSS 0.5 scores as one high (46) instead of one medium (42).
    expect(riskScore(scoringCounts([{ severity: 'medium', epss: 0.5 }]))).toBe(46);
  });

  it('reads kev and epss from remediation entries, so entries without them score as before', () => {
    const day = '2026-11-27';
    expect(dualScoreOf([{ severity: 'medium', kev: true }], day).risk_score).toBe(67);
    expect(dualScoreOf([{ severity: 'medium' }], day).risk_score).toBe(42);
    const excepted = dualScoreOf(
      [
        { severity: 'low', kev: true, exception_status: 'accepted' },
        { severity: 'low', epss: 0.2 },
      ],
      day,
    );
    expect([excepted.risk_score, excepted.risk_score_operational]).toEqual([69, 42]);
  });
});

const STAGES: Omit<StagesInput, 'findings' | 'vulnIndex'> = {
  hosts: [{ ip: '10.0.0.5' }],
  prior: null,
  exceptions: [],
  settings: {
    sessionId: '20261127_100000',
    target: '10.0.0.5',
    toolVersion: 'test',
    startedAt: new Date('2026-11-27T09:00:00Z'),
    schedule: null,
    orc: { enabled: false },
  } as StagesInput['settings'],
  license: { tier: 'business', state: null },
  now: new Date('2026-11-27T10:00:00Z'),
};

describe('the pipeline with an index', () => {
  const index = vulnIndex([{ id: 'CVE-2018-15473', cvss: 5.3, kev: '2024-01-08', epss: 0.3, epss_percentile: 0.96 }]);
  const findings = [
    finding('outdated-software:openssh-user-enumeration', 'medium', {
      references: { cve: ['CVE-2018-15473'] },
      cvss: 5.3,
    }),
  ];

  it('enriches findings from any source, carries kev to remediation and scores it as critical', () => {
    const { doc } = runStages({ ...STAGES, findings, vulnIndex: index });
    expect(doc.findings?.[0]).toMatchObject({
      kev: true,
      kev_date_added: '2024-01-08',
      epss: 0.3,
      epss_percentile: 0.96,
    });
    expect(doc.remediation?.[0]).toMatchObject({ severity: 'medium', kev: true, epss: 0.3 });
    expect(doc.summary).toMatchObject({ risk_score: 67, risk_grade: 'D', severity_counts: severityCounts(findings) });
    expect(doc.topology?.nodes?.[0]).toMatchObject({ risk_score: 67 });
  });

  it('scores as before without an index', () => {
    const { doc } = runStages({ ...STAGES, findings });
    expect(doc.findings?.[0]?.kev).toBeUndefined();
    expect(doc.summary).toMatchObject({ risk_score: 42, risk_grade: 'C' });
  });
});

const RULES = { enabled: true, risk_threshold: 100, on_new_critical: true, on_scan_complete: false };
const NOW = new Date('2026-11-27T10:00:00.000Z');
const session = (id: string, findings: Finding[]): SessionFile => ({
  metadata: { session_id: id, target: '10.0.0.5' },
  summary: { risk_score: 42, risk_grade: 'C', total_findings: findings.length },
  findings,
});

describe('a new known-exploited finding: new_critical with kev (the contract names the alert types)', () => {
  const kev = finding('cve:CVE-2018-15473', 'medium', { kev: true, kev_date_added: '2024-01-08' });
  const plain = finding('cve:CVE-2018-15473', 'medium');
  const critical = finding('cve:CVE-2024-6387', 'critical');

  it('alone: one new_critical alert with kev: true and its count, saying what it is', () => {
    const alerts = evaluateAlerts(session('20261127_100000', [kev]), session('20261126_100000', []), RULES, NOW);
    expect(alerts.map((a) => a.alert_type)).toEqual(['new_critical']);
    expect(alerts[0]).toMatchObject({
      subject: '[SVC] 1 new known-exploited finding on 10.0.0.5',
      message:
        "Session 20261127_100000 on 10.0.0.5: 1 finding naming a CVE in CISA's Known Exploited Vulnerabilities catalogue, " +
        'not known exploited in the prior scan: Title of cve:CVE-2018-15473 (medium, 10.0.0.5, KEV since 2024-01-08).',
      new_critical_high: 0,
      kev: true,
      new_kev: 1,
    });
  });

  it('beside new critical findings: still one new_critical alert, naming both', () => {
    const alerts = evaluateAlerts(session('b', [kev, critical]), session('a', []), RULES, NOW);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({
      alert_type: 'new_critical',
      subject: '[SVC] 1 new critical/high finding, 1 known exploited on 10.0.0.5',
      message:
        'Session b on 10.0.0.5: 1 critical/high finding not in the prior scan: Title of cve:CVE-2024-6387 (critical, 10.0.0.5). ' +
        "1 finding naming a CVE in CISA's Known Exploited Vulnerabilities catalogue, not known exploited in the prior scan: " +
        'Title of cve:CVE-2018-15473 (medium, 10.0.0.5, KEV since 2024-01-08).',
      new_critical_high: 1,
      kev: true,
      new_kev: 1,
    });
  });

  it('new critical findings without known exploitation: the alert as the contract writes it, no kev fields', () => {
    const [alert] = evaluateAlerts(session('b', [critical]), session('a', []), RULES, NOW);
    expect(alert?.alert_type).toBe('new_critical');
    expect(alert).not.toHaveProperty('kev');
    expect(alert).not.toHaveProperty('new_kev');
  });

  it('fires when the catalogue added the CVE of a persisting finding, not for one already known exploited', () => {
    expect(newKev(session('b', [kev]), session('a', [plain]))).toEqual([kev]);
    expect(newKev(session('b', [kev]), session('a', [kev]))).toEqual([]);
    expect(evaluateAlerts(session('b', [kev]), session('a', [kev]), RULES, NOW)).toEqual([]);
  });

  it('follows ALERT_ON_NEW_CRITICAL', () => {
    expect(evaluateAlerts(session('b', [kev]), null, { ...RULES, on_new_critical: false }, NOW)).toEqual([]);
  });
});

describe('the report', () => {
  const index = vulnIndex([{ id: 'CVE-2018-15473', cvss: 5.3, kev: '2024-01-08', epss: 0.42, epss_percentile: 0.971 }]);
  const findings = [
    finding('cve:CVE-2018-15473', 'medium', {
      references: { cve: ['CVE-2018-15473'] },
      title: 'OpenSSH 7.4: CVE-2018-15473 (potential)',
    }),
    finding('telnet-open', 'high', { port: 23 }),
  ];
  const input = (vulnIndexOrNull: VulnIndex | null) => ({
    doc: runStages({ ...STAGES, findings, vulnIndex: vulnIndexOrNull }).doc,
    trend: [],
    branding: brandingFromEnv(
      {},
      () => new Uint8Array(),
      () => {},
    ),
  });

  it('flags a known-exploited finding with a badge, EPSS and the catalogue date, in the findings and the top risks', () => {
    const page = renderReport(input(index));
    const badge =
      '<span class="kev" title="In CISA&#39;s Known Exploited Vulnerabilities catalogue since 2024-01-08">Known exploited</span>';
    expect(page).toContain(
      `<h3>OpenSSH 7.4: CVE-2018-15473 (potential) <span class="sev sev-medium">Medium</span> ${badge}</h3>`,
    );
    expect(page).toContain(
      'Rule cve:CVE-2018-15473; CVSS 5.3; EPSS 42.0 % (97th percentile); in CISA&#39;s Known Exploited Vulnerabilities catalogue since 2024-01-08',
    );
    // Known exploited ranks as critical among the top risks: above the high telnet finding.
    const top = page.slice(page.indexOf('<section id="top-risks"'));
    expect(
      top.indexOf(
        '1. OpenSSH 7.4: CVE-2018-15473 (potential) <span class="sev sev-medium">Medium</span> <span class="kev"',
      ),
    ).toBeGreaterThan(0);
    expect(renderExecSummary(input(index))).toContain(
      '<span class="kev" title="In CISA&#39;s Known Exploited Vulnerabilities catalogue">Known exploited</span>',
    );
  });

  it('shows no badge without the index', () => {
    expect(renderReport(input(null))).not.toContain('class="kev"');
  });
});
