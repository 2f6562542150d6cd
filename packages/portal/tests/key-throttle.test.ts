import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense } from '@svc/test-support/factories';
import { http } from '@svc/test-support/http';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';

/**
 * Failed API-key authentications are throttled per client address and key prefix
 * (SVC_API_KEY_FAILURES_PER_MINUTE, here 5), with a per-address budget of five times that for
 * prefixes that have not authenticated from the address (docs/security.md#requests-and-connections,
 * "Key guessing"). The portal trusts one proxy hop (SVC_TRUST_PROXY=1): this test is that proxy,
 * so the X-Forwarded-For it sets is the client's address, which lets it play several clients.
 */

const PREFIX = 14;
/** A wrong key with the given 14-character prefix, or with a fresh random one. */
const wrongKey = (prefix?: string) =>
  (prefix ?? `svc_pro_${randomBytes(3).toString('hex')}`) + randomBytes(29).toString('hex').slice(0, 58);
const REFUSED = { error: 'Too many failed API key attempts from this address, try again later' };

describe('throttling of failed API-key authentications', () => {
  let portal: TestPortal;
  beforeAll(async () => {
    portal = await startTestPortal({ env: { SVC_API_KEY_FAILURES_PER_MINUTE: '5', SVC_TRUST_PROXY: '1' } });
  });
  afterAll(() => portal.close());

  const as = (address: string, key: string) => ({ 'x-forwarded-for': address, 'x-api-key': key });
  const license = (address: string, key: string) =>
    http(portal.url, 'GET', '/api/license', { headers: as(address, key) });

  it('after 5 failures with one key prefix, that prefix gets 429 with Retry-After from that address, right key included, on every key route', async () => {
    const goodKey = (await createLicense(portal)).key;
    const prefix = goodKey.slice(0, PREFIX);
    for (let i = 0; i < 5; i++) {
      const res = await http(portal.url, 'PUT', '/api/refresh', {
        headers: as('203.0.113.7', wrongKey(prefix)),
        json: {},
      });
      expect(res.status, `attempt ${i}`).toBe(401);
      expect(res.body).toEqual({ error: 'Invalid API key' });
    }
    for (const [method, path, key] of [
      ['PUT', '/api/refresh', wrongKey(prefix)],
      ['PUT', '/api/refresh', goodKey],
      ['GET', '/api/license', goodKey],
    ] as const) {
      const res = await http(portal.url, method, path, {
        headers: as('203.0.113.7', key),
        json: method === 'PUT' ? {} : undefined,
      });
      expect(res.status, `${method} ${path}`).toBe(429);
      expect(res.body).toEqual(REFUSED);
      const retry = Number(res.headers.get('retry-after'));
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(60);
    }
    // The same key from another address is not affected.
    expect((await license('203.0.113.8', goodKey)).body).toMatchObject({ valid: true });
  });

  it('one client guessing under other prefixes does not lock out the agents that authenticated from its address', async () => {
    const agentKey = (await createLicense(portal)).key;
    const newcomerKey = (await createLicense(portal)).key;
    const nat = '198.51.100.50';
    expect((await license(nat, agentKey)).body).toMatchObject({ valid: true });
    // 25 guesses (5 x 5), each under a fresh prefix, malformed keys included: all plain failures.
    for (let i = 0; i < 25; i++) {
      const res = await license(nat, i % 5 === 0 ? `not-a-key-${i}` : wrongKey());
      expect(res.status, `guess ${i}`).toBe(200);
      expect(res.body).toMatchObject({ valid: false });
    }
    // The address's budget for unproven prefixes is spent: guessing stops, for every new prefix.
    for (const key of [wrongKey(), 'not-a-key', newcomerKey]) {
      const res = await license(nat, key);
      expect(res.status, key.slice(0, PREFIX)).toBe(429);
      expect(res.body).toEqual(REFUSED);
    }
    // The agent whose key authenticated from this address goes on working, and it alone.
    for (let i = 0; i < 3; i++) expect((await license(nat, agentKey)).body).toMatchObject({ valid: true });
    // Its own prefix is still throttled like any other: 5 wrong keys under it and it waits too.
    const agentPrefix = agentKey.slice(0, PREFIX);
    for (let i = 0; i < 5; i++) expect((await license(nat, wrongKey(agentPrefix))).status).toBe(200);
    expect((await license(nat, agentKey)).status).toBe(429);
    // Another address behind which nobody guessed is untouched.
    expect((await license('198.51.100.51', newcomerKey)).body).toMatchObject({ valid: true });
  });

  it('successful keys are never counted', async () => {
    const goodKey = (await createLicense(portal)).key;
    for (let i = 0; i < 30; i++) {
      const res = await license('198.51.100.1', goodKey);
      expect(res.status).toBe(200);
      expect(res.body.valid).toBe(true);
    }
    const res = await license('198.51.100.2', wrongKey());
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ valid: false, reason: 'not_found' });
  });
});
