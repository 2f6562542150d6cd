import { afterEach, describe, expect, it } from 'vitest';
import { testAlert, type AlertPayload } from '../src/alerts/evaluate.ts';
import { notifyAlerts, sendToChannels } from '../src/alerts/notify.ts';
import { alertSettingsFrom } from '../src/alerts/settings.ts';
import { slackMessage } from '../src/alerts/slack.ts';
import { httpReceiver, smtpReceiver, type ReceivedMail } from '@svc/test-support/alerts-receivers';

/**
 * Delivery of scan-time alerts to real local receivers: an SMTP server process (smtp-server)
 * and HTTP servers on 127.0.0.1 standing in for Slack and the webhook URL.
 */

const NOW = new Date('2026-11-23T10:00:00.000Z');
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

const alert = (type: AlertPayload['alert_type'], subject: string, message: string): AlertPayload => ({
  event: 'svc_alert',
  alert_type: type,
  timestamp: NOW.toISOString(),
  session_id: '20261123_100000',
  target: '10.0.0.0/24',
  risk_score: 82,
  risk_grade: 'F',
  new_critical_high: 1,
  total_findings: 7,
  subject,
  message,
});
const RISK = alert(
  'risk_threshold',
  '[SVC] Risk score 82 (grade F) reached the alert threshold on 10.0.0.0/24',
  'Session 20261123_100000 on 10.0.0.0/24: risk score 82 (grade F) >= threshold 60; 7 findings, 1 new critical/high.',
);
const NEW = alert(
  'new_critical',
  '[SVC] 1 new critical/high finding on 10.0.0.0/24',
  'Session 20261123_100000 on 10.0.0.0/24: 1 critical/high finding not in the prior scan: OpenSSH <9.8 regreSSHion & co (critical, 10.0.0.5).',
);

/** Headers unfolded and the quoted-printable body decoded, as a mail reader shows them. */
function readMail(mail: ReceivedMail): {
  subject: string;
  from: string;
  to: string;
  contentType: string;
  body: string;
} {
  const [head = '', ...rest] = mail.raw.split('\r\n\r\n');
  const headers = new Map(
    head
      .replace(/\r\n(?=[ \t])/g, '')
      .split('\r\n')
      .map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
  );
  let body = rest.join('\r\n\r\n');
  if (headers.get('content-transfer-encoding') === 'quoted-printable')
    body = body
      .replace(/=\r\n/g, '')
      .replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  return {
    subject: headers.get('subject') ?? '',
    from: headers.get('from') ?? '',
    to: headers.get('to') ?? '',
    contentType: headers.get('content-type') ?? '',
    body: body.replace(/\r\n/g, '\n'),
  };
}

async function receivers(opts: { refuseSmtp?: boolean; hangWebhook?: boolean; slackStatus?: number } = {}) {
  const smtp = await smtpReceiver({ refuse: opts.refuseSmtp ?? false });
  const slack = await httpReceiver({ status: opts.slackStatus ?? 200, path: '/services/T000/B000/SLACKSECRET' });
  const webhook = await httpReceiver({ hang: opts.hangWebhook ?? false, path: '/hook/WEBHOOKSECRET' });
  closers.push(smtp.close, slack.close, webhook.close);
  const settings = alertSettingsFrom({
    get: (k) =>
      ({
        ALERT_EMAIL: 'soc@example.com,cto@example.com',
        ALERT_EMAIL_FROM: 'scanner@example.com',
        SMTP_HOST: '127.0.0.1',
        SMTP_PORT: String(smtp.port),
        ALERT_SLACK_WEBHOOK: slack.url,
        ALERT_WEBHOOK_URL: webhook.url,
        ALERT_TIMEOUT: '1',
      })[k],
  });
  return { smtp, slack, webhook, settings };
}

describe('notifyAlerts', () => {
  it('sends every alert to every channel and records them all in alerts_summary', async () => {
    const { smtp, slack, webhook, settings } = await receivers();
    const logs: string[] = [];
    const summary = await notifyAlerts({ alerts: [RISK, NEW], settings, evaluatedAt: NOW, log: (m) => logs.push(m) });

    expect(summary).toEqual({
      evaluated_at: '2026-11-23T10:00:00.000Z',
      total_triggered: 2,
      alerts_triggered: [
        {
          type: 'risk_threshold',
          timestamp: '2026-11-23T10:00:00.000Z',
          message: RISK.message,
          channels_notified: ['email', 'slack', 'webhook'],
        },
        {
          type: 'new_critical',
          timestamp: '2026-11-23T10:00:00.000Z',
          message: NEW.message,
          channels_notified: ['email', 'slack', 'webhook'],
        },
      ],
      config: {
        risk_threshold: 60,
        on_new_critical: true,
        on_scan_complete: false,
        channels: ['email', 'slack', 'webhook'],
      },
    });
    expect(logs).toEqual([]);

    // The webhook gets the payload exactly.
    expect(
      webhook.bodies.sort((a, b) =>
        String((a as AlertPayload).alert_type).localeCompare((b as AlertPayload).alert_type),
      ),
    ).toEqual([NEW, RISK]);
    expect(webhook.headers[0]?.['content-type']).toBe('application/json');

    // Slack gets block-kit JSON.
    const slackNew = slack.bodies.find((b) => (b as { text: string }).text === NEW.subject);
    expect(slackNew).toEqual({
      text: '[SVC] 1 new critical/high finding on 10.0.0.0/24',
      blocks: [
        { type: 'header', text: { type: 'plain_text', text: '[SVC] 1 new critical/high finding on 10.0.0.0/24' } },
        {
          type: 'section',
          text: {
            type: 'mrkdwn',
            text: 'Session 20261123_100000 on 10.0.0.0/24: 1 critical/high finding not in the prior scan: OpenSSH &lt;9.8 regreSSHion &amp; co (critical, 10.0.0.5).',
          },
        },
        {
          type: 'section',
          fields: [
            { type: 'mrkdwn', text: '*Risk score*\n82 (grade F)' },
            { type: 'mrkdwn', text: '*New critical/high*\n1' },
            { type: 'mrkdwn', text: '*Total findings*\n7' },
            { type: 'mrkdwn', text: '*Target*\n10.0.0.0/24' },
          ],
        },
        {
          type: 'context',
          elements: [{ type: 'mrkdwn', text: '*new_critical* · session 20261123_100000 · 2026-11-23T10:00:00.000Z' }],
        },
      ],
    });
    expect(slack.bodies).toHaveLength(2);

    // The SMTP server received one plain-text mail per alert, to both recipients.
    expect(smtp.mails).toHaveLength(2);
    const mails = smtp.mails
      .map((m) => ({ envelope: { from: m.from, to: m.to }, ...readMail(m) }))
      .sort((a, b) => a.subject.localeCompare(b.subject));
    expect(mails[0]).toEqual({
      envelope: { from: 'scanner@example.com', to: ['soc@example.com', 'cto@example.com'] },
      subject: NEW.subject,
      from: 'scanner@example.com',
      to: 'soc@example.com, cto@example.com',
      contentType: 'text/plain; charset=utf-8',
      body: [
        NEW.message,
        '',
        'Alert type:        new_critical',
        'Session:           20261123_100000',
        'Target:            10.0.0.0/24',
        'Risk score:        82 (grade F)',
        'New critical/high: 1',
        'Total findings:    7',
        'Time:              2026-11-23T10:00:00.000Z',
        '',
      ].join('\n'),
    });
    expect(mails[1]?.subject).toBe(RISK.subject);
    expect(mails[1]?.body.startsWith(`${RISK.message}\n\nAlert type:        risk_threshold\n`)).toBe(true);
  });

  it('a hanging webhook and a refusing SMTP server: bounded, Slack still notified, only Slack recorded', async () => {
    const { smtp, slack, webhook, settings } = await receivers({ refuseSmtp: true, hangWebhook: true });
    const logs: string[] = [];
    const started = Date.now();
    const summary = await notifyAlerts({ alerts: [RISK], settings, evaluatedAt: NOW, log: (m) => logs.push(m) });
    // ALERT_TIMEOUT=1: the hanging receiver costs about a second, never the 10 s default.
    expect(Date.now() - started).toBeLessThan(8_000);

    expect(summary.alerts_triggered).toEqual([
      {
        type: 'risk_threshold',
        timestamp: '2026-11-23T10:00:00.000Z',
        message: RISK.message,
        channels_notified: ['slack'],
      },
    ]);
    expect(summary.config?.channels).toEqual(['email', 'slack', 'webhook']);
    expect(slack.bodies).toHaveLength(1);
    expect(webhook.bodies).toEqual([RISK]);
    expect(smtp.mails).toEqual([]);
    expect(logs.sort()).toEqual([
      'alert risk_threshold: email channel failed: SMTP EPROTOCOL 554',
      'alert risk_threshold: webhook channel failed: no answer within 1 s',
    ]);
  });

  it('an SMTP port nobody listens on and a Slack 500 are failures; secrets never reach the log', async () => {
    const { slack, webhook, settings } = await receivers({ slackStatus: 500 });
    const closedPort = await smtpReceiver();
    await closedPort.close();
    const email = { ...settings.channels.email!, port: closedPort.port, user: 'scanner', pass: 'SMTPPASSWORD' };
    const logs: string[] = [];
    const results = await sendToChannels(testAlert(NOW), { ...settings.channels, email }, 1000, (m) => logs.push(m));
    expect(results).toEqual([
      { channel: 'email', ok: false, reason: 'SMTP ESOCKET' },
      { channel: 'slack', ok: false, reason: 'answered HTTP 500' },
      { channel: 'webhook', ok: true, reason: null },
    ]);
    expect(slack.bodies).toHaveLength(1);
    expect(webhook.bodies).toEqual([testAlert(NOW)]);
    expect(logs.join('\n')).not.toMatch(/SECRET|SMTPPASSWORD|example\.com|127\.0\.0\.1/);
  });

  it('a redirect is a failure and is not followed', async () => {
    const target = await httpReceiver();
    const redirecting = await httpReceiver({ status: 307, location: target.url });
    closers.push(target.close, redirecting.close);
    const results = await sendToChannels(
      testAlert(NOW),
      { email: null, slack: null, webhook: redirecting.url },
      1000,
      () => {},
    );
    expect(results).toEqual([{ channel: 'webhook', ok: false, reason: 'answered HTTP 307' }]);
    expect(redirecting.bodies).toHaveLength(1);
    expect(target.bodies).toEqual([]);
  });

  it('with alerts disabled or none triggered the summary says so and nothing is sent', async () => {
    const { smtp, slack, webhook, settings } = await receivers();
    expect(
      await notifyAlerts({ alerts: [], settings: { ...settings, enabled: false }, evaluatedAt: null, log: () => {} }),
    ).toEqual({
      evaluated_at: null,
      total_triggered: 0,
      alerts_triggered: [],
      config: {
        risk_threshold: 60,
        on_new_critical: true,
        on_scan_complete: false,
        channels: ['email', 'slack', 'webhook'],
      },
    });
    expect([smtp.mails, slack.bodies, webhook.bodies]).toEqual([[], [], []]);
  });
});

describe('slackMessage', () => {
  it("cuts a header longer than Slack's 150 characters", () => {
    const long = { ...RISK, subject: `[SVC] ${'x'.repeat(200)}` };
    const header = (slackMessage(long).blocks as { text: { text: string } }[])[0]!.text.text;
    expect(header).toHaveLength(150);
    expect(header.endsWith('…')).toBe(true);
  });
});
