import { createHmac, randomBytes } from 'node:crypto';
import { verify } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { WEBHOOK_API_VERSION, WEBHOOK_USER_AGENT } from '@svc/protocol';
import { deliveryHeaders, standardWebhooksSecret } from './signing.ts';

/**
 * docs/api.md#webhooks headers and docs/api.md#webhooks's Standard Webhooks headers, checked with
 * the stock verifiers receivers use: @octokit/webhooks-methods for X-SVC-Signature-256
 * (the GitHub scheme) and the `standardwebhooks` package for webhook-signature.
 */

const secret = randomBytes(32).toString('hex');
const eventId = `evt_${randomBytes(8).toString('hex')}`;
const nowSeconds = () => Math.floor(Date.now() / 1000);
const body = JSON.stringify({
  api_version: '2',
  event_type: 'scan_completed',
  event_id: eventId,
  timestamp: new Date().toISOString(),
  data: { client: 'Zürich Wasser ✓', emoji: '🛰️', n: 1 },
});

describe('deliveryHeaders', () => {
  it('carries exactly the X-SVC headers plus the three Standard Webhooks headers', () => {
    const ts = nowSeconds();
    const h = deliveryHeaders(secret, 'scan_completed', eventId, body, ts);
    expect(Object.keys(h).sort()).toEqual(
      [
        'content-type',
        'user-agent',
        'webhook-id',
        'webhook-signature',
        'webhook-timestamp',
        'x-svc-api-version',
        'x-svc-delivery',
        'x-svc-event',
        'x-svc-signature-256',
      ].sort(),
    );
    expect(h['content-type']).toBe('application/json');
    expect(h['x-svc-event']).toBe('scan_completed');
    expect(h['x-svc-delivery']).toBe(eventId);
    expect(h['x-svc-api-version']).toBe('2');
    expect(WEBHOOK_API_VERSION).toBe('2');
    expect(h['user-agent']).toBe(WEBHOOK_USER_AGENT);
    expect(h['user-agent']).toMatch(/-webhook\/2\.0$/);
    expect(h['webhook-id']).toBe(eventId);
    expect(h['webhook-timestamp']).toBe(String(ts));
    expect(h['x-svc-signature-256']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(h['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
  });

  it('X-SVC-Signature-256 is HMAC-SHA256 of the exact UTF-8 body bytes, and @octokit/webhooks-methods verifies it', async () => {
    const h = deliveryHeaders(secret, 'scan_completed', eventId, body, nowSeconds());
    const expected = createHmac('sha256', secret).update(Buffer.from(body, 'utf8')).digest('hex');
    expect(h['x-svc-signature-256']).toBe(`sha256=${expected}`);
    expect(await verify(secret, body, h['x-svc-signature-256'] as string)).toBe(true);
  });

  it('a changed body, another secret or another signature fails @octokit verification', async () => {
    const h = deliveryHeaders(secret, 'scan_completed', eventId, body, nowSeconds());
    const sig = h['x-svc-signature-256'] as string;
    expect(await verify(secret, body.replace('"n":1', '"n":2'), sig)).toBe(false);
    expect(await verify(randomBytes(32).toString('hex'), body, sig)).toBe(false);
    expect(await verify(secret, body, `sha256=${'0'.repeat(64)}`)).toBe(false);
  });

  it('webhook-signature verifies with the standardwebhooks package given standard_webhooks_secret (whsec_ form) or the raw key', () => {
    const h = deliveryHeaders(secret, 'status_changed', eventId, body, nowSeconds());
    const wh = new Webhook(standardWebhooksSecret(secret));
    expect(wh.verify(body, h)).toEqual(JSON.parse(body));
    expect(wh.verify(Buffer.from(body, 'utf8'), h)).toEqual(JSON.parse(body));
    expect(new Webhook(secret, { format: 'raw' }).verify(body, h)).toEqual(JSON.parse(body));
  });

  it('standard_webhooks_secret is whsec_ + base64 of the signing secret bytes', () => {
    expect(standardWebhooksSecret(secret)).toBe(`whsec_${Buffer.from(secret, 'utf8').toString('base64')}`);
    expect(Buffer.from(standardWebhooksSecret(secret).slice(6), 'base64').toString('utf8')).toBe(secret);
  });

  it('the signed timestamp gives replay protection: a stale or tampered delivery is refused by the stock verifier', () => {
    const wh = new Webhook(standardWebhooksSecret(secret));
    const stale = deliveryHeaders(secret, 'status_changed', eventId, body, nowSeconds() - 600);
    expect(() => wh.verify(body, stale)).toThrow(/too old/i);
    const h = deliveryHeaders(secret, 'status_changed', eventId, body, nowSeconds());
    // The timestamp and the id are inside the signature: changing either breaks it.
    expect(() => wh.verify(body, { ...h, 'webhook-timestamp': String(nowSeconds() - 1) })).toThrow();
    expect(() => wh.verify(body, { ...h, 'webhook-id': `evt_${'0'.repeat(16)}` })).toThrow();
    expect(() => wh.verify(`${body} `, h)).toThrow();
    expect(() => new Webhook(standardWebhooksSecret(randomBytes(32).toString('hex'))).verify(body, h)).toThrow();
  });

  it('the Standard Webhooks signature is over "<id>.<timestamp>.<body>"', () => {
    const ts = nowSeconds();
    const h = deliveryHeaders(secret, 'ping', eventId, body, ts);
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8'))
      .update(`${eventId}.${ts}.${body}`, 'utf8')
      .digest('base64');
    expect(h['webhook-signature']).toBe(`v1,${expected}`);
    expect(new Webhook(standardWebhooksSecret(secret)).sign(eventId, new Date(ts * 1000), body)).toBe(
      h['webhook-signature'],
    );
  });
});
