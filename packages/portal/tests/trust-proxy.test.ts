import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config/index.ts';
import { http } from '@svc/test-support/http';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';

/**
 * SVC_TRUST_PROXY: a hop count or the proxies' addresses; the client is
 * the rightmost address in X-Forwarded-For that is not a trusted proxy. `true` is refused.
 * Through a real nginx: tests/client-address-nginx.test.ts.
 */

const trust = (value: string) => loadConfig({ SVC_TRUST_PROXY: value }, '/srv').trustProxy;
function refusal(value: string): string {
  try {
    trust(value);
  } catch (err) {
    if (err instanceof ConfigError && err.variable === 'SVC_TRUST_PROXY') return err.message;
    throw err;
  }
  throw new Error(`SVC_TRUST_PROXY=${value} was accepted`);
}

describe('SVC_TRUST_PROXY parsing', () => {
  it.each([
    ['', false],
    ['0', false],
    ['false', false],
    ['Off', false],
    ['1', 1],
    [' 2 ', 2],
    ['32', 32],
    ['127.0.0.1', ['127.0.0.1']],
    ['127.0.0.1, 10.0.0.0/8,::1 ,fd00::/8', ['127.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8']],
  ] as const)('%j is %j', (value, expected) => {
    expect(trust(value)).toEqual(expected);
  });

  it.each(['true', 'TRUE', 'yes', 'on'])('%s (every hop) is refused with the new forms named', (value) => {
    expect(refusal(value)).toBe(
      'Invalid configuration: SVC_TRUST_PROXY must be the number of proxies in front of the portal (e.g. 1) or a ' +
        'comma-separated list of their addresses or CIDR ranges (e.g. 127.0.0.1,10.0.0.0/8); ' +
        `"${value}" (trust every hop) is no longer accepted: it let clients choose their own address`,
    );
  });

  it.each([
    ['33', /must be at most 32 proxy hops \(got 33\)/],
    ['maybe', /\(got "maybe"\)$/],
    ['10.1', /\(got "10.1"\)$/],
    ['0x7f.0.0.1', /\(got "0x7f.0.0.1"\)$/],
    ['127.0.0.1,', /\(got ""\)$/],
    ['10.0.0.0/33', /\(got "10.0.0.0\/33"\)$/],
    ['-1', /\(got "-1"\)$/],
    ['loopback', /\(got "loopback"\)$/],
  ])('%s is refused', (value, message) => {
    expect(refusal(value)).toMatch(message);
  });
});

/** The address a request is counted under, seen through the key throttle (limit 2 per address and prefix). */
describe('which X-Forwarded-For entry is the client', () => {
  const portals: TestPortal[] = [];
  afterAll(() => Promise.all(portals.map((p) => p.close())));
  const start = async (value: string) => {
    const portal = await startTestPortal({ env: { SVC_API_KEY_FAILURES_PER_MINUTE: '2', SVC_TRUST_PROXY: value } });
    portals.push(portal);
    return portal;
  };
  /** Two failures under one prefix as `xff`, then the status of a third as `probe`. */
  async function countedAs(portal: TestPortal, xff: string, probe: string): Promise<number> {
    const prefix = `svc_pro_${randomBytes(3).toString('hex')}`;
    const key = () => prefix + randomBytes(29).toString('hex').slice(0, 58);
    for (let i = 0; i < 2; i++) {
      const res = await http(portal.url, 'GET', '/api/license', {
        headers: { 'x-forwarded-for': xff, 'x-api-key': key() },
      });
      expect(res.status).toBe(200);
    }
    return (
      await http(portal.url, 'GET', '/api/license', { headers: { 'x-forwarded-for': probe, 'x-api-key': key() } })
    ).status;
  }

  let hops: TestPortal;
  let listed: TestPortal;
  beforeAll(async () => {
    hops = await start('1');
    listed = await start('127.0.0.1, 203.0.113.0/24');
  });

  it('one hop: the rightmost entry, whatever the client wrote to its left', async () => {
    expect(await countedAs(hops, '9.9.9.1, 198.51.100.1', '198.51.100.1')).toBe(429);
    expect(await countedAs(hops, '9.9.9.2, 198.51.100.2', '9.9.9.2')).toBe(200);
  });

  it('an address list: the rightmost address that is not a listed proxy', async () => {
    // 127.0.0.1 (the socket) and 203.0.113.5 are proxies: 198.51.100.3 is the client.
    expect(await countedAs(listed, '9.9.9.3, 198.51.100.3, 203.0.113.5', '198.51.100.3')).toBe(429);
    expect(await countedAs(listed, '9.9.9.4, 198.51.100.4, 203.0.113.5', '9.9.9.4')).toBe(200);
  });
});
