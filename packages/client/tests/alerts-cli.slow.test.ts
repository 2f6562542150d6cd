import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, SVC, writeConfig } from '@svc/test-support/cli';
import { httpReceiver, smtpReceiver, type HttpReceiver, type SmtpReceiver } from '@svc/test-support/alerts-receivers';

/** `svc alert --test` as a real process against an SMTP server and HTTP receivers on 127.0.0.1. */

const BUSINESS_KEY = `svc_biz_${'ab'.repeat(32)}`;
let dir: string;
const closers: (() => Promise<void>)[] = [];
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-alert-'));
});
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
  await fs.rm(dir, { recursive: true, force: true });
});

async function channels(
  opts: { refuseSmtp?: boolean; hangWebhook?: boolean } = {},
): Promise<{ smtp: SmtpReceiver; slack: HttpReceiver; webhook: HttpReceiver; config: Record<string, string> }> {
  const smtp = await smtpReceiver({ refuse: opts.refuseSmtp ?? false });
  const slack = await httpReceiver({ path: '/services/T/B/SLACKSECRET' });
  const webhook = await httpReceiver({ hang: opts.hangWebhook ?? false, path: '/hook/WEBHOOKSECRET' });
  closers.push(smtp.close, slack.close, webhook.close);
  return {
    smtp,
    slack,
    webhook,
    config: {
      ALERT_EMAIL: 'soc@example.com',
      SMTP_HOST: '127.0.0.1',
      SMTP_PORT: String(smtp.port),
      ALERT_SLACK_WEBHOOK: slack.url,
      ALERT_WEBHOOK_URL: webhook.url,
      ALERT_TIMEOUT: '1',
    },
  };
}

const payloadOf = (body: unknown) => body as Record<string, unknown>;

describe('svc alert --test', () => {
  it('sends a test alert to every configured channel: exit 0, each listed as accepted', async () => {
    const { smtp, slack, webhook, config } = await channels();
    const r = await runCli(SVC, ['alert', '--test', '-c', await writeConfig(dir, config)], {
      env: { SVC_LICENSE_KEY: BUSINESS_KEY },
    });
    expect(r).toMatchObject({ code: 0, stdout: 'email: accepted\nslack: accepted\nwebhook: accepted\n', stderr: '' });
    expect(smtp.mails.map((m) => m.to)).toEqual([['soc@example.com']]);
    expect(smtp.mails[0]?.raw).toContain('Subject: [SVC] Test alert\r\n');
    expect((slack.bodies[0] as { text: string }).text).toBe('[SVC] Test alert');
    expect(webhook.bodies).toHaveLength(1);
    const payload = payloadOf(webhook.bodies[0]);
    expect(Object.keys(payload)).toEqual([
      'event',
      'alert_type',
      'timestamp',
      'session_id',
      'target',
      'risk_score',
      'risk_grade',
      'new_critical_high',
      'total_findings',
      'subject',
      'message',
    ]);
    expect(payload).toMatchObject({ event: 'svc_alert', alert_type: 'test', subject: '[SVC] Test alert' });
    expect(Number.isNaN(Date.parse(String(payload['timestamp'])))).toBe(false);
  });

  it('a refusing SMTP server and a hanging webhook: exit 1 within the bound, Slack still accepted, no secret printed', async () => {
    const { slack, config } = await channels({ refuseSmtp: true, hangWebhook: true });
    const r = await runCli(
      SVC,
      ['alert', '--test', '-c', await writeConfig(dir, { ...config, SMTP_USER: 'scanner', SMTP_PASS: 'SMTPPASSWORD' })],
      { env: { SVC_LICENSE_KEY: BUSINESS_KEY }, timeoutMs: 30_000 },
    );
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(
      'email: failed (SMTP EPROTOCOL 554)\nslack: accepted\nwebhook: failed (no answer within 1 s)\n',
    );
    expect(r.stderr).toContain('error: 2 of 3 alert channels did not accept the test alert\n');
    expect(slack.bodies).toHaveLength(1);
    expect(r.stdout + r.stderr).not.toMatch(/SECRET|SMTPPASSWORD/);
  });

  it('below business the webhook channel is skipped with a warning (soft gate); e-mail and Slack still go', async () => {
    const { smtp, slack, webhook, config } = await channels();
    const r = await runCli(SVC, ['alert', '--test', '-c', await writeConfig(dir, config)], {
      env: { SVC_LICENSE_KEY: `svc_pro_${'cd'.repeat(32)}` },
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('email: accepted\nslack: accepted\nwebhook: skipped (needs the business tier)\n');
    expect(r.stderr).toContain('warning: Skipping webhooks: it needs the business tier (this host: professional)\n');
    expect([smtp.mails.length, slack.bodies.length, webhook.bodies.length]).toEqual([1, 1, 0]);
  });

  it('no channel configured: exit 2 with the settings to set', async () => {
    const r = await runCli(SVC, [
      'alert',
      '--test',
      '-c',
      await writeConfig(dir, { ALERT_WEBHOOK_URL: 'ftp://example.com/x' }),
    ]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      'warning: ALERT_WEBHOOK_URL must be an http or https URL; that alert channel is off\nerror: no alert channel is configured: set ALERT_EMAIL, ALERT_SLACK_WEBHOOK or ALERT_WEBHOOK_URL\n',
    );
  });

  it('svc --help lists the command', async () => {
    const r = await runCli(SVC, ['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ {2}alert \[options\]\s+scan-time alerts: send a test alert/m);
  });

  it('without --test there is nothing to do: exit 2', async () => {
    const r = await runCli(SVC, ['alert']);
    expect(r).toMatchObject({
      code: 2,
      stdout: '',
      stderr: 'error: nothing to do: pass --test to send a test alert\n',
    });
  });
});
