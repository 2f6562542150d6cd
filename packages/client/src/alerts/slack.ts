import type { AlertPayload } from './evaluate.ts';
import { postJson } from './post.ts';

/** Slack caps a header block's plain text at 150 characters. */
const HEADER_MAX = 150;

/** mrkdwn gives &, < and > meaning (links, mentions): escape them as Slack documents. */
export const mrkdwn = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The block-kit message of an alert; `text` is the notification fallback. */
export function slackMessage(alert: AlertPayload): Record<string, unknown> {
  const header = alert.subject.length > HEADER_MAX ? `${alert.subject.slice(0, HEADER_MAX - 1)}…` : alert.subject;
  const context = [`*${alert.alert_type}*`, alert.session_id ? `session ${alert.session_id}` : null, alert.timestamp]
    .filter((x) => x !== null)
    .join(' · ');
  return {
    text: alert.subject,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: header } },
      { type: 'section', text: { type: 'mrkdwn', text: mrkdwn(alert.message) } },
      {
        type: 'section',
        fields: [
          { type: 'mrkdwn', text: `*Risk score*\n${alert.risk_score} (grade ${alert.risk_grade})` },
          { type: 'mrkdwn', text: `*New critical/high*\n${alert.new_critical_high}` },
          { type: 'mrkdwn', text: `*Total findings*\n${alert.total_findings}` },
          { type: 'mrkdwn', text: `*Target*\n${mrkdwn(alert.target || '-')}` },
        ],
      },
      { type: 'context', elements: [{ type: 'mrkdwn', text: mrkdwn(context) }] },
    ],
  };
}

/** ALERT_SLACK_WEBHOOK: an incoming-webhook URL. */
export async function sendSlack(url: string, alert: AlertPayload, timeoutMs: number): Promise<void> {
  await postJson(url, slackMessage(alert), timeoutMs);
}
