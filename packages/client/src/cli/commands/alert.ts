import type { Command } from 'commander';
import { testAlert } from '../../alerts/evaluate.ts';
import { gateChannels } from '../../alerts/gate.ts';
import { sendToChannels } from '../../alerts/notify.ts';
import { alertSettingsFrom, configuredChannels } from '../../alerts/settings.ts';
import { licenseState } from '../../kit/license/service.ts';
import type { CliContext } from '../context.ts';
import { configOption, settingsOf, type CommonOpts } from '../options.ts';
import { CliError, Output, usageError } from '../output.ts';

interface AlertOpts extends CommonOpts {
  test?: boolean;
}

/** Seconds allowed for the license check that decides the webhook gate. */
const LICENSE_TIMEOUT_S = 10;

export default function register(program: Command, ctx: CliContext): void {
  const cmd = program
    .command('alert')
    .description('scan-time alerts: send a test alert to every configured channel (e-mail, Slack, webhook)')
    .option('--test', 'send a test alert to every configured channel and print which accepted it');
  configOption(cmd);
  cmd.addHelpText(
    'after',
    '\nChannels: ALERT_EMAIL (else REMINDER_EMAIL) over SMTP_HOST/SMTP_PORT/SMTP_SECURE/SMTP_USER/SMTP_PASS from ALERT_EMAIL_FROM; ALERT_SLACK_WEBHOOK; ALERT_WEBHOOK_URL (business tier). Each channel is bounded by ALERT_TIMEOUT seconds (default 10).\nExit 0 every configured channel accepted; 1 one or more did not; 2 no channel is configured.',
  );
  cmd.action(async (opts: AlertOpts) => {
    if (opts.test !== true) throw usageError('nothing to do: pass --test to send a test alert');
    const out = new Output(ctx.streams);
    const warn = (m: string) => out.warn(m);
    const settings = settingsOf(opts, ctx);
    const alerts = alertSettingsFrom(settings, warn);
    const configured = configuredChannels(alerts.channels);
    if (configured.length === 0)
      throw usageError('no alert channel is configured: set ALERT_EMAIL, ALERT_SLACK_WEBHOOK or ALERT_WEBHOOK_URL');
    const tier =
      alerts.channels.webhook === null
        ? ''
        : (await licenseState({ settings, home: ctx.home, now: ctx.now, warn, timeoutS: LICENSE_TIMEOUT_S })).tier;
    const allowed = gateChannels(alerts.channels, tier, warn);
    const results = await sendToChannels(testAlert(ctx.now()), allowed, alerts.timeout_ms, (m) => out.info(m));
    const c = out.out;
    for (const channel of configured) {
      const r = results.find((x) => x.channel === channel);
      if (r === undefined) out.print(`${channel}: ${c.yellow('skipped')} (needs the business tier)`);
      else out.print(`${channel}: ${r.ok ? c.green('accepted') : `${c.red('failed')} (${r.reason})`}`);
    }
    const accepted = results.filter((r) => r.ok).length;
    if (accepted < configured.length)
      throw new CliError(
        `${configured.length - accepted} of ${configured.length} alert channels did not accept the test alert`,
        'failed',
      );
  });
}
