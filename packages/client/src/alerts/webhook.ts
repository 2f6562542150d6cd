import type { AlertPayload } from './evaluate.ts';
import { postJson } from './post.ts';

/** ALERT_WEBHOOK_URL: the payload as is (event "svc_alert"). */
export async function sendWebhook(url: string, alert: AlertPayload, timeoutMs: number): Promise<void> {
  await postJson(url, alert, timeoutMs);
}
