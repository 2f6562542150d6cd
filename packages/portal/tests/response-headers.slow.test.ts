import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense, type LicenseFixture } from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { newSessionId, postUpload, sessionParts } from '@svc/test-support/upload';

/**
 * Response headers: `Cache-Control: no-store` on every /api and /identity
 * answer except the public, cacheable ones; `X-Robots-Tag: noindex` on share answers; the
 * API docs page's security headers; the frame-ancestors list of SVC_FRAME_ANCESTORS.
 */

const REPORT = '<!doctype html><html><body><p>report</p></body></html>';

describe('response headers', () => {
  let portal: TestPortal;
  let key: LicenseFixture;
  let admin: string;
  let token = '';
  const sessionId = newSessionId();

  beforeAll(async () => {
    portal = await startTestPortal({ env: { SVC_FRAME_ANCESTORS: "'self', https://intranet.example.com" } });
    admin = await portal.adminToken();
    key = await createLicense(portal, { tier: 'business' });
    const res = await postUpload(
      portal.url,
      key.key,
      sessionParts(
        {
          metadata: { session_id: sessionId, client: 'Acme', target: 'host' },
          summary: { risk_score: 1, risk_grade: 'A', total_findings: 0, total_hosts: 1 },
        },
        { report: REPORT },
      ),
    );
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.text}`);
    token = res.body.share_token;
  });
  afterAll(async () => {
    await portal?.close();
    if (portal) await fs.rm(portal.dataDir, { recursive: true, force: true });
  });

  describe('Cache-Control: no-store on answers that carry a key, a secret or tenant data', () => {
    it('keys and secrets: license create, webhook create, identity token', async () => {
      const license = await http(portal.url, 'POST', '/api/licenses', {
        headers: withToken(admin),
        json: { client_id: 'cache-client', tier: 'professional', name: 'cache key' },
      });
      expect(license.status).toBe(201);
      expect(license.body.license.plaintext_key).toMatch(/^svc_pro_/);
      expect(license.headers.get('cache-control')).toBe('no-store');

      const webhook = await http(portal.url, 'POST', '/api/webhooks', {
        headers: withToken(admin),
        json: { url: 'https://93.184.215.14/hooks/svc', event_types: ['scan_completed'] },
      });
      expect(webhook.status).toBe(201);
      expect(typeof webhook.body.subscription.signing_secret).toBe('string');
      expect(webhook.headers.get('cache-control')).toBe('no-store');

      const login = await http(portal.url, 'POST', '/identity/token', {
        form: { grant_type: 'password', username: ADMIN_EMAIL, password: ADMIN_PASSWORD },
      });
      expect(login.status).toBe(200);
      expect(login.headers.get('cache-control')).toBe('no-store');
    });

    it('tenant data: license list, sessions, audit, db-health, agent groups, the user, and errors', async () => {
      const cases: [string, Record<string, string>, number][] = [
        ['/api/licenses', withToken(admin), 200],
        ['/api/sessions', withToken(admin), 200],
        ['/api/audit', withToken(admin), 200],
        ['/api/db-health', withToken(admin), 200],
        ['/api/agent-groups', withToken(admin), 200],
        ['/api/license', withKey(key.key), 200],
        ['/identity/user', { authorization: `Bearer ${admin}` }, 200],
        ['/identity/admin/users', { authorization: `Bearer ${admin}` }, 200],
        // Refusals and unknown paths are not cacheable either.
        ['/api/sessions', {}, 401],
        ['/api/no-such-route', {}, 404],
        ['/identity/no-such-route', {}, 404],
        ['/api/sessions', { authorization: `Bearer ${admin}` }, 401],
        ['/%61pi/sessions', { authorization: `Bearer ${admin}` }, 401],
        ['/api/sessions?limit=nope', withToken(admin), 400],
      ];
      for (const [path, headers, status] of cases) {
        const res = await http(portal.url, 'GET', path, { headers });
        expect(res.status, path).toBe(status);
        expect(res.headers.get('cache-control'), path).toBe('no-store');
      }
    });

    it('downloads and share answers keep their private, no-store', async () => {
      const download = await http(portal.url, 'GET', `/api/download?session=${sessionId}&file=report.html`, {
        headers: withKey(key.key),
      });
      expect(download.status).toBe(200);
      expect(download.headers.get('cache-control')).toBe('private, no-store');
      const share = await http(portal.url, 'GET', `/api/share?token=${token}`);
      expect(share.status).toBe(200);
      expect(share.headers.get('cache-control')).toBe('private, no-store');
    });

    it('public answers may be cached: health, the OpenAPI document, provider metadata and keys', async () => {
      for (const path of ['/api/health', '/api/openapi.json', '/identity/.well-known/openid-configuration']) {
        const res = await http(portal.url, 'GET', path);
        expect(res.status, path).toBe(200);
        expect(res.headers.get('cache-control'), path).toBeNull();
      }
      const jwks = await http(portal.url, 'GET', '/identity/.well-known/jwks.json');
      expect(jwks.status).toBe(200);
      expect(jwks.headers.get('cache-control')).toBe('public, max-age=300');
    });
  });

  describe('X-Robots-Tag: noindex on share answers', () => {
    it('/share/ and /api/share, found or not', async () => {
      for (const path of [
        `/share/?token=${token}`,
        `/share/?token=${'0'.repeat(64)}`,
        '/share/',
        `/share/frame?token=${token}`,
        `/share/frame?token=${'0'.repeat(64)}`,
        '/share/frame?file=x',
        `/api/share?token=${token}`,
        `/api/share?token=${'0'.repeat(64)}`,
      ]) {
        const res = await http(portal.url, 'GET', path);
        expect(res.headers.get('x-robots-tag'), path).toBe('noindex');
      }
    });
  });

  describe('SVC_FRAME_ANCESTORS', () => {
    it('the share page and viewed files name the configured framers, without X-Frame-Options', async () => {
      const share = await http(portal.url, 'GET', `/share/?token=${token}`);
      expect(share.status).toBe(200);
      expect(share.headers.get('content-security-policy')).toMatch(
        /; frame-ancestors 'self' https:\/\/intranet\.example\.com$/,
      );
      expect(share.headers.get('x-frame-options')).toBeNull();
      // The report inside the share page: framed by the share page (the portal) and the same framers.
      const frame = await http(portal.url, 'GET', `/share/frame?token=${token}`);
      expect(frame.status).toBe(200);
      expect(frame.headers.get('content-security-policy')).toMatch(
        /; frame-ancestors 'self' https:\/\/intranet\.example\.com$/,
      );
      expect(frame.headers.get('x-frame-options')).toBeNull();
      const view = await http(
        portal.url,
        'GET',
        `/api/download?session=${sessionId}&file=report.html&mode=view&token=${token}`,
      );
      expect(view.status).toBe(200);
      expect(view.text).toBe(REPORT);
      expect(view.headers.get('content-security-policy')).toMatch(
        /; frame-ancestors 'self' https:\/\/intranet\.example\.com$/,
      );
      expect(view.headers.get('x-frame-options')).toBeNull();
    });

    it("exactly 'self' also sends X-Frame-Options SAMEORIGIN", async () => {
      const own = await startTestPortal({ env: { SVC_FRAME_ANCESTORS: 'self' } });
      try {
        const res = await http(own.url, 'GET', `/share/?token=${'0'.repeat(64)}`);
        expect(res.status).toBe(404);
        expect(res.headers.get('content-security-policy')).toMatch(/; frame-ancestors 'self'$/);
        expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
      } finally {
        await own.close();
        await fs.rm(own.dataDir, { recursive: true, force: true });
      }
    });
  });

  describe('the API docs page /api/docs', () => {
    it('carries a CSP for swagger-ui, nosniff, no framing and no Referer; and still renders', async () => {
      const index = await fetch(`${portal.url}/api/docs/`);
      expect(index.status).toBe(200);
      expect(index.headers.get('content-type')).toMatch(/^text\/html/);
      const html = await index.text();
      expect(html).toContain('swagger-ui');
      for (const path of ['/api/docs/', '/api/docs/static/swagger-initializer.js', '/api/docs/json']) {
        const res = await fetch(`${portal.url}${path}`);
        await res.arrayBuffer();
        expect(res.status, path).toBe(200);
        const csp = res.headers.get('content-security-policy') ?? '';
        expect(csp, path).toMatch(/^default-src 'self'; /);
        expect(csp, path).toContain("frame-ancestors 'none'");
        expect(csp, path).toContain("base-uri 'self'");
        expect(csp, path).toContain("form-action 'self'");
        expect(csp, path).toContain("object-src 'none'");
        expect(csp, path).toContain("style-src 'self' 'unsafe-inline';");
        expect(csp, path).toContain("script-src 'self'; script-src-attr 'none';");
        expect(csp, path).not.toContain('upgrade-insecure-requests');
        expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
        expect(res.headers.get('x-frame-options'), path).toBe('DENY');
        expect(res.headers.get('referrer-policy'), path).toBe('no-referrer');
      }
    });
  });
});
