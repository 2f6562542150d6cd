import { riskGrade, riskScore, type Finding, type SessionFile } from '@svc/protocol';
import { findingFingerprint } from '@svc/protocol/node';
import { describe, expect, it } from 'vitest';
import { evaluateAlerts, newCriticalHigh, testAlert } from '../src/alerts/evaluate.ts';
import { ALERT_DEFAULTS, alertSettingsFrom } from '../src/alerts/settings.ts';

/** docs/scanner/alerts.md: which alerts a session triggers, and the settings behind the rules. */

const NOW = new Date('2026-11-23T10:00:00.000Z');
const RULES = { enabled: true, risk_threshold: 60, on_new_critical: true, on_scan_complete: false };

const finding = (
  rule_id: string,
  severity: NonNullable<Finding['severity']>,
  host = '10.0.0.5',
  port = 443,
): Finding => ({
  rule_id,
  title: `Title of ${rule_id}`,
  severity,
  host,
  port,
  protocol: 'tcp',
  fingerprint: findingFingerprint({ rule_id, host, port, protocol: 'tcp' }),
});

const session = (id: string, findings: Finding[], risk_score?: number): SessionFile => ({
  metadata: { session_id: id, target: '10.0.0.0/24' },
  ...(risk_score === undefined
    ? {}
    : { summary: { risk_score, risk_grade: riskGrade(risk_score), total_findings: findings.length } }),
  findings,
});

const settingsOf = (values: Record<string, string>) => ({ get: (k: string) => values[k] });

describe('evaluateAlerts', () => {
  it('risk_threshold fires at score >= threshold with the documented payload fields, not below', () => {
    const prior = session('20261122_100000', [finding('ssh-weak', 'high')]);
    const at = evaluateAlerts(session('20261123_100000', [finding('ssh-weak', 'high')], 60), prior, RULES, NOW);
    expect(at).toEqual([
      {
        event: 'svc_alert',
        alert_type: 'risk_threshold',
        timestamp: '2026-11-23T10:00:00.000Z',
        session_id: '20261123_100000',
        target: '10.0.0.0/24',
        risk_score: 60,
        risk_grade: 'D',
        new_critical_high: 0,
        total_findings: 1,
        subject: '[SVC] Risk score 60 (grade D) reached the alert threshold on 10.0.0.0/24',
        message:
          'Session 20261123_100000 on 10.0.0.0/24: risk score 60 (grade D) >= threshold 60; 1 findings, 0 new critical/high.',
      },
    ]);
    expect(evaluateAlerts(session('20261123_100000', [finding('ssh-weak', 'high')], 59), prior, RULES, NOW)).toEqual(
      [],
    );
  });

  it('without a stored score the protocol rule scores the findings', () => {
    const findings = Array.from({ length: 10 }, (_, i) => finding(`r${i}`, 'critical'));
    const [alert] = evaluateAlerts(
      session('20261123_100000', findings),
      session('20261122_100000', findings),
      RULES,
      NOW,
    );
    expect(alert?.alert_type).toBe('risk_threshold');
    expect(alert?.risk_score).toBe(riskScore({ critical: 10, high: 0, medium: 0, low: 0, info: 0 }));
    expect(alert?.risk_grade).toBe('F');
  });

  it("the grade goes with the score it came from: a summary score without a grade is graded, not given metadata's grade", () => {
    const doc: SessionFile = {
      metadata: { session_id: '20261123_100000', risk_score: 10, risk_grade: 'A' },
      summary: { risk_score: 80 },
      findings: [],
    };
    expect(evaluateAlerts(doc, null, RULES, NOW)[0]).toMatchObject({ risk_score: 80, risk_grade: 'F' });
  });

  it('new_critical counts critical and high findings absent from the prior session, matched by fingerprint', () => {
    const prior = session('20261122_100000', [finding('old-crit', 'critical'), finding('gone', 'high')]);
    const now = session(
      '20261123_100000',
      [
        finding('old-crit', 'critical'),
        finding('new-crit', 'critical'),
        finding('new-high', 'high', '10.0.0.6', 22),
        finding('new-med', 'medium'),
      ],
      10,
    );
    const alerts = evaluateAlerts(now, prior, RULES, NOW);
    expect(alerts.map((a) => a.alert_type)).toEqual(['new_critical']);
    expect(alerts[0]).toMatchObject({
      new_critical_high: 2,
      subject: '[SVC] 2 new critical/high findings on 10.0.0.0/24',
      message:
        'Session 20261123_100000 on 10.0.0.0/24: 2 critical/high findings not in the prior scan: Title of new-crit (critical, 10.0.0.5); Title of new-high (high, 10.0.0.6).',
    });
  });

  it('the same weakness on another port is new; findings without fingerprints match by rule, host, port and protocol', () => {
    const bare = ({ fingerprint: _fingerprint, ...f }: Finding): Finding => f;
    const prior = session('20261122_100000', [bare(finding('tls-old', 'high', '10.0.0.5', 443))]);
    const now = session('20261123_100000', [
      finding('tls-old', 'high', '10.0.0.5', 443),
      bare(finding('tls-old', 'high', '10.0.0.5', 8443)),
    ]);
    expect(newCriticalHigh(now, prior).map((f) => f.port)).toEqual([8443]);
  });

  it('with no prior session every critical and high finding is new', () => {
    const now = session('20261123_100000', [finding('a', 'critical'), finding('b', 'high'), finding('c', 'low')], 10);
    expect(evaluateAlerts(now, null, RULES, NOW).map((a) => [a.alert_type, a.new_critical_high])).toEqual([
      ['new_critical', 2],
    ]);
  });

  it('new_critical is off when on_new_critical is false; scan_complete fires on every session when on', () => {
    const now = session('20261123_100000', [finding('a', 'critical')], 10);
    expect(evaluateAlerts(now, null, { ...RULES, on_new_critical: false }, NOW)).toEqual([]);
    const alerts = evaluateAlerts(session('20261123_100000', [], 0), null, { ...RULES, on_scan_complete: true }, NOW);
    expect(alerts).toEqual([
      expect.objectContaining({
        alert_type: 'scan_complete',
        risk_score: 0,
        total_findings: 0,
        subject: '[SVC] Scan complete on 10.0.0.0/24: risk score 0 (grade A)',
        message:
          'Session 20261123_100000 on 10.0.0.0/24 finished: risk score 0 (grade A), 0 findings, 0 new critical/high.',
      }),
    ]);
  });

  it('all three fire in order; ALERT_ENABLED=false fires none', () => {
    const now = session('20261123_100000', [finding('a', 'critical')], 90);
    expect(evaluateAlerts(now, null, { ...RULES, on_scan_complete: true }, NOW).map((a) => a.alert_type)).toEqual([
      'risk_threshold',
      'new_critical',
      'scan_complete',
    ]);
    expect(evaluateAlerts(now, null, { ...RULES, enabled: false, on_scan_complete: true }, NOW)).toEqual([]);
  });

  it('line breaks in a target or title never reach the subject', () => {
    const now: SessionFile = {
      metadata: { session_id: '20261123_100000', target: 'evil\r\nBcc: x@y' },
      findings: [{ ...finding('a', 'critical'), title: 'T\nX' }],
    };
    const alerts = evaluateAlerts(now, null, RULES, NOW);
    // One critical scores 67, over the threshold: both alerts, neither with a line break.
    expect(alerts.map((a) => a.subject)).toStrictEqual([
      '[SVC] Risk score 67 (grade D) reached the alert threshold on evil Bcc: x@y',
      '[SVC] 1 new critical/high finding on evil Bcc: x@y',
    ]);
    expect(alerts[1]?.message).toContain('T X (critical');
  });

  it('the test alert', () => {
    expect(testAlert(NOW)).toEqual({
      event: 'svc_alert',
      alert_type: 'test',
      timestamp: '2026-11-23T10:00:00.000Z',
      session_id: '',
      target: '',
      risk_score: 0,
      risk_grade: 'A',
      new_critical_high: 0,
      total_findings: 0,
      subject: '[SVC] Test alert',
      message: 'Test alert sent by svc alert --test: this alert channel is configured correctly.',
    });
  });
});

describe('alertSettingsFrom', () => {
  it('defaults: enabled, threshold 60, new_critical on, scan_complete off, 10 s, no channel', () => {
    const warnings: string[] = [];
    expect(alertSettingsFrom(settingsOf({}), (m) => warnings.push(m))).toEqual({
      enabled: true,
      risk_threshold: 60,
      on_new_critical: true,
      on_scan_complete: false,
      timeout_ms: 10_000,
      channels: { email: null, slack: null, webhook: null },
    });
    expect(ALERT_DEFAULTS).toMatchObject({ risk_threshold: 60, on_new_critical: true, on_scan_complete: false });
    expect(warnings).toEqual([]);
  });

  it('reads every setting', () => {
    const s = alertSettingsFrom(
      settingsOf({
        ALERT_ENABLED: 'false',
        ALERT_RISK_THRESHOLD: '75',
        ALERT_ON_NEW_CRITICAL: 'false',
        ALERT_ON_SCAN_COMPLETE: 'true',
        ALERT_TIMEOUT: '3',
        ALERT_EMAIL: 'soc@example.com, cto@example.com',
        ALERT_EMAIL_FROM: 'scanner@example.com',
        SMTP_HOST: 'mail.example.com',
        SMTP_SECURE: 'true',
        SMTP_USER: 'u',
        SMTP_PASS: 'p w',
        ALERT_SLACK_WEBHOOK: 'https://hooks.slack.com/services/T/B/x',
        ALERT_WEBHOOK_URL: 'http://127.0.0.1:9/hook',
      }),
    );
    expect(s).toEqual({
      enabled: false,
      risk_threshold: 75,
      on_new_critical: false,
      on_scan_complete: true,
      timeout_ms: 3000,
      channels: {
        email: {
          to: ['soc@example.com', 'cto@example.com'],
          from: 'scanner@example.com',
          host: 'mail.example.com',
          port: 465,
          secure: true,
          user: 'u',
          pass: 'p w',
        },
        slack: 'https://hooks.slack.com/services/T/B/x',
        webhook: 'http://127.0.0.1:9/hook',
      },
    });
  });

  it('ALERT_EMAIL falls back to REMINDER_EMAIL; SMTP defaults localhost:587 without TLS from the start', () => {
    expect(alertSettingsFrom(settingsOf({ REMINDER_EMAIL: 'ops@example.com' })).channels.email).toEqual({
      to: ['ops@example.com'],
      from: 'svc-alerts@localhost',
      host: 'localhost',
      port: 587,
      secure: false,
      user: null,
      pass: null,
    });
    expect(
      alertSettingsFrom(settingsOf({ REMINDER_EMAIL: 'ops@example.com', ALERT_EMAIL: 'soc@example.com' })).channels
        .email?.to,
    ).toEqual(['soc@example.com']);
  });

  it("invalid values warn and use the default, with push_config's value rules for the remote keys", () => {
    const warnings: string[] = [];
    const s = alertSettingsFrom(
      settingsOf({
        ALERT_ENABLED: 'maybe',
        ALERT_RISK_THRESHOLD: '101',
        ALERT_ON_NEW_CRITICAL: 'yes',
        ALERT_ON_SCAN_COMPLETE: 'sometimes',
        ALERT_TIMEOUT: '0',
        ALERT_EMAIL: 'not-an-address',
        ALERT_SLACK_WEBHOOK: 'file:///etc/passwd',
        ALERT_WEBHOOK_URL: 'not a url',
      }),
      (m) => warnings.push(m),
    );
    expect(s).toEqual({
      enabled: true,
      risk_threshold: 60,
      on_new_critical: true,
      on_scan_complete: false,
      timeout_ms: 10_000,
      channels: { email: null, slack: null, webhook: null },
    });
    expect(warnings).toEqual([
      'ALERT_ENABLED must be true or false for ALERT_ENABLED; using the default true',
      'ALERT_RISK_THRESHOLD must be an integer from 0 to 100 for ALERT_RISK_THRESHOLD; using the default 60',
      'ALERT_ON_NEW_CRITICAL must be true or false for ALERT_ON_NEW_CRITICAL; using the default true',
      'ALERT_ON_SCAN_COMPLETE must be true or false; using the default false',
      'ALERT_TIMEOUT must be an integer from 1 to 300; using the default 10',
      'ALERT_EMAIL: "not-an-address" is not an e-mail address; skipped',
      'ALERT_SLACK_WEBHOOK must be an http or https URL; that alert channel is off',
      'ALERT_WEBHOOK_URL is not a valid URL; that alert channel is off',
    ]);
  });
});
