import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { type NginxListener, nginxListener, requestFrom as request, startNginx } from '@svc/test-support/nginx';

/**
 * Through a real nginx (docs/security.md#behind-a-reverse-proxy): a client cannot
 * choose its address by writing X-Forwarded-For, and distinct real clients (connecting from
 * 127.0.0.2 and 127.0.0.3) are counted separately, for the key throttle and the login lock.
 * Two setups: nginx setting the header with SVC_TRUST_PROXY=127.0.0.1 (what docs/security.md
 * recommends), and nginx appending to it ($proxy_add_x_forwarded_for) with SVC_TRUST_PROXY=1.
 */

interface Site {
  /** The nginx line that passes X-Forwarded-For on. */
  forwardedFor: string;
  portal: TestPortal;
}

/** nginx with one server per site, each proxying to its portal. */
async function startSites(sites: Site[]): Promise<{ ports: number[]; stop: () => Promise<void> }> {
  const listeners = await Promise.all(sites.map(() => nginxListener()));
  const nginx = await startNginx(
    sites.map((site, i) => ({
      listener: listeners[i] as NginxListener,
      body: `location / {
      proxy_pass http://127.0.0.1:${new URL(site.portal.url).port};
      ${site.forwardedFor}
    }`,
    })),
  );
  return { ports: listeners.map((l) => l.port), stop: () => nginx.stop() };
}

const THROTTLED = { error: 'Too many failed API key attempts from this address, try again later' };

describe.each([
  [
    'nginx sets X-Forwarded-For, SVC_TRUST_PROXY=127.0.0.1',
    'proxy_set_header X-Forwarded-For $remote_addr;',
    '127.0.0.1',
  ],
  [
    'nginx appends to X-Forwarded-For, SVC_TRUST_PROXY=1',
    'proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
    '1',
  ],
])('behind a real nginx: %s', (_name, forwardedFor, trustProxy) => {
  let portal: TestPortal | undefined;
  let nginx: Awaited<ReturnType<typeof startSites>> | undefined;
  let port: number;

  beforeAll(async () => {
    portal = await startTestPortal({ env: { SVC_TRUST_PROXY: trustProxy, SVC_API_KEY_FAILURES_PER_MINUTE: '3' } });
    nginx = await startSites([{ forwardedFor, portal }]);
    port = nginx.ports[0] as number;
  });
  afterAll(async () => {
    await nginx?.stop();
    await portal?.close();
  });

  it('a client-written X-Forwarded-For does not escape the key throttle; another real client has its own count', async () => {
    const prefix = `svc_pro_${randomBytes(3).toString('hex')}`;
    const key = () => prefix + randomBytes(29).toString('hex').slice(0, 58);
    for (let i = 0; i < 3; i++) {
      const res = await request(port, '127.0.0.2', 'GET', '/api/license', {
        'x-api-key': key(),
        'x-forwarded-for': `203.0.113.${i + 1}`,
      });
      expect(res.status, `guess ${i}`).toBe(200);
      expect(res.body).toMatchObject({ valid: false, reason: 'not_found' });
    }
    for (const spoofed of ['203.0.113.99', '127.0.0.3', '203.0.113.98, 127.0.0.3']) {
      const res = await request(port, '127.0.0.2', 'GET', '/api/license', {
        'x-api-key': key(),
        'x-forwarded-for': spoofed,
      });
      expect({ spoofed, status: res.status, body: res.body }).toEqual({ spoofed, status: 429, body: THROTTLED });
    }
    // The real 127.0.0.3, same prefix: not throttled.
    const other = await request(port, '127.0.0.3', 'GET', '/api/license', { 'x-api-key': key() });
    expect(other.status).toBe(200);
    expect(other.body).toMatchObject({ valid: false, reason: 'not_found' });
  });

  it('failed logins lock the real client out whatever it writes, and the owner signs in from another address', async () => {
    const login = (from: string, password: string, spoofed?: string) =>
      request(port, from, 'POST', '/identity/token', spoofed === undefined ? {} : { 'x-forwarded-for': spoofed }, {
        grant_type: 'password',
        username: ADMIN_EMAIL,
        password,
      }).then(({ status, body }) => ({ status, body }));
    for (let i = 0; i < 5; i++) {
      const res = await login('127.0.0.2', 'wrong-password-000', `198.51.100.${i + 1}`);
      expect(res.status, `attempt ${i}`).toBe(400);
    }
    const locked = await login('127.0.0.2', 'wrong-password-000', '198.51.100.77');
    expect(locked).toEqual({
      status: 429,
      body: { error: 'too_many_attempts', error_description: 'Too many failed logins; try again later' },
    });
    // Even the right password waits out the lock at that address...
    expect((await login('127.0.0.2', ADMIN_PASSWORD, '127.0.0.3')).status).toBe(429);
    // ...while the real 127.0.0.3 is not locked.
    const owner = await login('127.0.0.3', ADMIN_PASSWORD);
    expect(owner.status).toBe(200);
    expect(owner.body).toMatchObject({ token_type: 'Bearer' });
  });
});
