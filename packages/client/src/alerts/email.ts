import nodemailer from 'nodemailer';
import type { AlertPayload } from './evaluate.ts';
import { ChannelError } from './post.ts';
import type { EmailChannel } from './settings.ts';

/** The plain-text body: the message, then the payload's facts one per line. */
export function emailText(alert: AlertPayload): string {
  return [
    alert.message,
    '',
    `Alert type:        ${alert.alert_type}`,
    `Session:           ${alert.session_id || '-'}`,
    `Target:            ${alert.target || '-'}`,
    `Risk score:        ${alert.risk_score} (grade ${alert.risk_grade})`,
    `New critical/high: ${alert.new_critical_high}`,
    `Total findings:    ${alert.total_findings}`,
    `Time:              ${alert.timestamp}`,
    '',
  ].join('\n');
}

/**
 * ALERT_EMAIL (else REMINDER_EMAIL): one plain-text mail to every recipient over SMTP. Each
 * SMTP stage (connect, greeting, every later read) is bounded by `timeoutMs`; notify.ts bounds
 * the whole. The reason of a failure names the SMTP stage or code, never the credentials.
 */
export async function sendEmail(channel: EmailChannel, alert: AlertPayload, timeoutMs: number): Promise<void> {
  const transport = nodemailer.createTransport({
    host: channel.host,
    port: channel.port,
    secure: channel.secure,
    ...(channel.user !== null ? { auth: { user: channel.user, pass: channel.pass ?? '' } } : {}),
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  try {
    await transport.sendMail({ from: channel.from, to: channel.to, subject: alert.subject, text: emailText(alert) });
  } catch (err) {
    const e = err as Error & { code?: string; responseCode?: number };
    throw new ChannelError(`SMTP ${e.code ?? 'error'}${e.responseCode ? ` ${e.responseCode}` : ''}`);
  } finally {
    transport.close();
  }
}
