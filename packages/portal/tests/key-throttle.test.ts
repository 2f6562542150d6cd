import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense } from './helpers/factories.ts';
import { http } from './helpers/http.ts';
import { startTestPortal, type TestPortal } from './helpers/portal.ts';

/**
 * Issue 11, point 12: failed API-key authentications are throttled per client address
 * (SVC_API_KEY_FAILURES_PER_MINUTE); past the limit the address gets 429 for every key,
 * right or wrong, until the minute ends. Behind a proxy (SVC_TRUST_PROXY) the address is
 * the forwarded one, which lets this test play several clients.
 */

const wrongKey = (i: number) => `svc_pro_${i.toString(16).padStart(64, '0')}`;

describe('throttling of failed API-key authentications', () => {
  let portal: TestPortal;
  let goodKey: string;
  beforeAll(async () => {
    portal = await startTestPortal({ env: { SVC_API_KEY_FAILURES_PER_MINUTE: '5', SVC_TRUST_PROXY: 'true' } });
    goodKey = (await createLicense(portal)).key;
  });
  afterAll(() => portal.close());

  const as = (address: string, key: string) => ({ 'x-forwarded-for': address, 'x-api-key': key });

  it('after 5 failures an address gets 429 with Retry-After, for wrong and right keys, on every key route', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await http(portal.url, 'PUT', '/api/refresh', { headers: as('203.0.113.7', wrongKey(i)), json: {} });
      expect(res.status, `attempt ${i}`).toBe(401);
      expect(res.body).toEqual({ error: 'Invalid API key' });
    }
    for (const [method, path, key] of [
      ['PUT', '/api/refresh', wrongKey(99)],
      ['PUT', '/api/refresh', goodKey],
      ['GET', '/api/license', goodKey],
      ['GET', '/api/license', 'not-even-a-key'],
    ] as const) {
      const res = await http(portal.url, method, path, {
        headers: as('203.0.113.7', key),
        json: method === 'PUT' ? {} : undefined,
      });
      expect(res.status, `${method} ${path}`).toBe(429);
      expect(res.body).toEqual({ error: 'Too many failed API key attempts from this address, try again later' });
      const retry = Number(res.headers.get('retry-after'));
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(60);
    }
  });

  it('other addresses, and successful keys, are not counted', async () => {
    for (let i = 0; i < 20; i++) {
      const res = await http(portal.url, 'GET', '/api/license', { headers: as('198.51.100.1', goodKey) });
      expect(res.status).toBe(200);
      expect(res.body.valid).toBe(true);
    }
    const res = await http(portal.url, 'GET', '/api/license', { headers: as('198.51.100.2', wrongKey(1)) });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ valid: false, reason: 'not_found' });
  });
});
