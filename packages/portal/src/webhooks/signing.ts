import { createHmac } from 'node:crypto';
import { WEBHOOK_API_VERSION, WEBHOOK_USER_AGENT } from '@svc/protocol';

/**
 * The headers of one delivery attempt. The X-SVC ones: `X-SVC-Signature-256` is `sha256=` + hex
 * HMAC-SHA256 of the exact body bytes keyed with the signing secret (the GitHub scheme, so
 * stock verifiers work). Beside them, the Standard Webhooks headers: `webhook-signature` is
 * `v1,` + base64 HMAC-SHA256 of `<id>.<timestamp>.<body>` with the same key bytes, which a
 * stock verifier takes as `whsec_` + base64(signing secret); the signed timestamp gives
 * receivers replay protection.
 */
export function deliveryHeaders(
  secret: string,
  eventType: string,
  eventId: string,
  body: string,
  nowSeconds: number,
): Record<string, string> {
  // The key as a string (HMAC keys a string by its UTF-8 bytes): keying with a Buffer costs
  // ~16 µs per HMAC on Node 24 against ~3 µs, twice per delivery.
  const key = secret;
  const github = createHmac('sha256', key).update(body, 'utf8').digest('hex');
  const standard = createHmac('sha256', key).update(`${eventId}.${nowSeconds}.${body}`, 'utf8').digest('base64');
  return {
    'content-type': 'application/json',
    'user-agent': WEBHOOK_USER_AGENT,
    'x-svc-event': eventType,
    'x-svc-signature-256': `sha256=${github}`,
    'x-svc-delivery': eventId,
    'x-svc-api-version': WEBHOOK_API_VERSION,
    'webhook-id': eventId,
    'webhook-timestamp': String(nowSeconds),
    'webhook-signature': `v1,${standard}`,
  };
}

/** The secret in the form Standard Webhooks libraries expect. */
export function standardWebhooksSecret(secret: string): string {
  return `whsec_${Buffer.from(secret, 'utf8').toString('base64')}`;
}
