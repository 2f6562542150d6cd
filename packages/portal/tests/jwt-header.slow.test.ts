import { createHmac } from 'node:crypto';
import { decodeJwt, SignJWT } from 'jose';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createLicense, createScopedUser } from '@svc/test-support/factories';
import { http, withToken, type HttpResult } from '@svc/test-support/http';
import type { TestPortal } from '@svc/test-support/portal';
import { usePortalWithDb } from '@svc/test-support/portal-db';

/**
 * docs/api.md#credentials, docs/api.md: the admin JWT goes only in X-Identity-Token. Any
 * Authorization header on /api/* is refused before a handler runs, and a fake credential
 * gets the same plain 401 under either header.
 */

const b64url = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

/** Status, body and headers of a response, without the Date header (which changes every second). */
function fingerprint(res: HttpResult) {
  const headers = [...res.headers.entries()].filter(([name]) => name !== 'date').sort(([a], [b]) => a.localeCompare(b));
  return { status: res.status, text: res.text, headerNames: headers.map(([n]) => n), headers };
}

describe('JWT header rules', () => {
  let portal: TestPortal;
  let db: pg.Client;
  let valid: string;
  let fakes: Record<string, string>;
  let licenseId: string;

  usePortalWithDb(async (p) => {
    ({ portal, db } = p);
    valid = await portal.adminToken();
    licenseId = (await createLicense(portal, { tier: 'msp' })).record.id;

    const key = portal.ctx.signingKey!;
    const sub = decodeJwt(valid).sub!;
    const iss = 'http://portal.test/identity';
    const now = Math.floor(Date.now() / 1000);
    const signed = (claims: Record<string, unknown>, set: (j: SignJWT) => SignJWT) =>
      set(new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ: 'JWT' })).sign(key.privateKey);

    const [head, payload, sig] = valid.split('.') as [string, string, string];
    const claims = decodeJwt(valid);
    const deletedUser = await createScopedUser(portal, [], { role: 'admin' });
    await db.query('DELETE FROM users WHERE id = $1', [deletedUser.id]);

    fakes = {
      garbage: 'garbage',
      empty: ' ',
      'three dots': 'a.b.c',
      'alg none': `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url({ ...claims })}.`,
      'HS256 with a guessed secret': (() => {
        const h = b64url({ alg: 'HS256', typ: 'JWT' });
        const p = b64url({ ...claims });
        return `${h}.${p}.${createHmac('sha256', 'secret').update(`${h}.${p}`).digest('base64url')}`;
      })(),
      expired: await signed({ email: 'admin@test.local', role: 'admin', client_ids: [] }, (j) =>
        j
          .setSubject(sub)
          .setIssuer(iss)
          .setAudience('svc-portal')
          .setIssuedAt(now - 7200)
          .setExpirationTime(now - 3600),
      ),
      'no exp': await signed({ role: 'admin' }, (j) =>
        j.setSubject(sub).setIssuer(iss).setAudience('svc-portal').setIssuedAt(now),
      ),
      'wrong audience': await signed({ role: 'admin' }, (j) =>
        j
          .setSubject(sub)
          .setIssuer(iss)
          .setAudience('another-app')
          .setIssuedAt(now)
          .setExpirationTime(now + 600),
      ),
      'wrong issuer': await signed({ role: 'admin' }, (j) =>
        j
          .setSubject(sub)
          .setIssuer('https://evil.test/identity')
          .setAudience('svc-portal')
          .setIssuedAt(now)
          .setExpirationTime(now + 600),
      ),
      'not yet valid': await signed({ role: 'admin' }, (j) =>
        j
          .setSubject(sub)
          .setIssuer(iss)
          .setAudience('svc-portal')
          .setIssuedAt(now)
          .setNotBefore(now + 3600)
          .setExpirationTime(now + 7200),
      ),
      'tampered payload': `${head}.${b64url({ ...claims, email: 'mallory@test.local' })}.${sig}`,
      'tampered signature': `${head}.${payload}.${sig.slice(0, -4)}${sig.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`,
      'deleted user': deletedUser.token,
      'Bearer prefix': `Bearer ${valid}`,
    };
  });

  const licenseCount = async () => Number((await db.query('SELECT count(*)::int AS n FROM licenses')).rows[0].n);
  const auditCount = async () => Number((await db.query('SELECT count(*)::int AS n FROM audit_events')).rows[0].n);
  const body = { tier: 'msp', client_id: 'via-authorization', name: 'should not exist' };

  const endpoints = () =>
    [
      ['GET', '/api/licenses', undefined],
      ['POST', '/api/licenses', body],
      ['PATCH', `/api/licenses?id=${licenseId}`, { action: 'revoke' }],
      ['DELETE', `/api/licenses?id=${licenseId}`, undefined],
      ['GET', '/api/audit', undefined],
      ['GET', '/api/audit?days=7', undefined],
    ] as const;

  it('a valid token in X-Identity-Token works (the baseline)', async () => {
    const res = await http(portal.url, 'GET', '/api/licenses', { headers: withToken(valid) });
    expect(res.status).toBe(200);
    expect(res.body.licenses).toHaveLength(1);
  });

  describe('any Authorization header on /api/* is refused with the plain 401', () => {
    const authorizations = () => ({
      'a valid portal JWT': `Bearer ${valid}`,
      'the JWT without a scheme': valid,
      garbage: 'garbage',
      'Bearer x': 'Bearer x',
      Basic: `Basic ${Buffer.from('admin@test.local:admin-password-0123').toString('base64')}`,
      empty: '',
    });

    it('on every endpoint, with or without a valid X-Identity-Token beside it', async () => {
      for (const [method, path, json] of endpoints()) {
        for (const [what, authorization] of Object.entries(authorizations())) {
          for (const extra of [{}, withToken(valid)]) {
            const res = await http(portal.url, method, path, { headers: { authorization, ...extra }, json });
            const label = `${method} ${path} ${what} ${Object.keys(extra).join()}`;
            expect(res.status, label).toBe(401);
            expect(res.text, label).toBe('{"error":"Unauthorized"}');
            expect(res.headers.get('content-type'), label).toBe('application/json; charset=utf-8');
          }
        }
      }
    });

    it('also on /api/license, /api/health and unknown /api paths', async () => {
      for (const path of ['/api/license', '/api/health', '/api/nope', '/api/openapi.json']) {
        const res = await http(portal.url, 'GET', path, {
          headers: { authorization: `Bearer ${valid}`, 'x-api-key': 'whatever' },
        });
        expect(res.status, path).toBe(401);
        expect(res.text, path).toBe('{"error":"Unauthorized"}');
      }
    });

    it('the handler never runs: POST, PATCH and DELETE with a valid token in Authorization change nothing', async () => {
      const licenses = await licenseCount();
      const events = await auditCount();
      for (const extra of [{}, withToken(valid)]) {
        for (const [method, path, json] of endpoints()) {
          const res = await http(portal.url, method, path, {
            headers: { authorization: `Bearer ${valid}`, ...extra },
            json,
          });
          expect(res.status).toBe(401);
        }
      }
      expect(await licenseCount()).toBe(licenses);
      expect(await auditCount()).toBe(events);
      expect(
        (await db.query('SELECT count(*)::int AS n FROM licenses WHERE client_id = $1', ['via-authorization'])).rows[0]
          .n,
      ).toBe(0);
      expect(
        (await db.query('SELECT revoked_at FROM licenses WHERE id = $1', [licenseId])).rows[0].revoked_at,
      ).toBeNull();
    });

    it('an encoded path that still routes to /api is refused the same way (the guards check too)', async () => {
      const licenses = await licenseCount();
      for (const path of [
        '/%61pi/licenses',
        '/%61%70%69/licenses',
        '/api/%6cicenses',
        '/%61pi/audit',
        '/%61pi/license',
      ]) {
        const get = await http(portal.url, 'GET', path, {
          headers: { authorization: `Bearer ${valid}`, ...withToken(valid), 'x-api-key': 'k' },
        });
        expect(get.status, path).toBe(401);
        expect(get.text, path).toBe('{"error":"Unauthorized"}');
      }
      const post = await http(portal.url, 'POST', '/%61pi/licenses', {
        headers: { authorization: `Bearer ${valid}`, ...withToken(valid) },
        json: body,
      });
      expect(post.status).toBe(401);
      expect(await licenseCount()).toBe(licenses);
      // Without Authorization the encoded path is an ordinary request.
      const plain = await http(portal.url, 'GET', '/%61pi/licenses', { headers: withToken(valid) });
      expect(plain.status).toBe(200);
    });
  });

  describe('a fake credential cannot tell the two headers apart', () => {
    it('every invalid token in X-Identity-Token answers exactly like a valid token in Authorization', async () => {
      for (const [method, path, json] of endpoints()) {
        const reference = fingerprint(
          await http(portal.url, method, path, { headers: { authorization: `Bearer ${valid}` }, json }),
        );
        expect(reference.status).toBe(401);
        expect(reference.text).toBe('{"error":"Unauthorized"}');
        // cache-control: no-store on every /api answer, the refusal included.
        expect(reference.headerNames).toEqual([
          'cache-control',
          'connection',
          'content-length',
          'content-type',
          'keep-alive',
        ]);

        for (const [what, token] of Object.entries(fakes)) {
          const res = await http(portal.url, method, path, { headers: withToken(token), json });
          expect(fingerprint(res), `${method} ${path} X-Identity-Token ${what}`).toEqual(reference);
        }
        for (const [what, token] of Object.entries(fakes)) {
          const res = await http(portal.url, method, path, { headers: { authorization: `Bearer ${token}` }, json });
          expect(fingerprint(res), `${method} ${path} Authorization ${what}`).toEqual(reference);
        }
        const none = await http(portal.url, method, path, { json });
        expect(fingerprint(none), `${method} ${path} no credential`).toEqual(reference);
      }
    });

    it('a valid token in a cookie is not a credential', async () => {
      for (const name of ['nf_jwt', 'svc_identity', 'identity', 'x-identity-token']) {
        const res = await http(portal.url, 'GET', '/api/licenses', { headers: { cookie: `${name}=${valid}` } });
        expect(res.status, name).toBe(401);
        expect(res.text).toBe('{"error":"Unauthorized"}');
      }
    });

    it('none of the fake tokens changed anything', async () => {
      expect(
        (await db.query('SELECT count(*)::int AS n FROM licenses WHERE client_id = $1', ['via-authorization'])).rows[0]
          .n,
      ).toBe(0);
      expect(
        (await db.query('SELECT revoked_at FROM licenses WHERE id = $1', [licenseId])).rows[0].revoked_at,
      ).toBeNull();
    });
  });

  it('the identity provider itself uses the ordinary bearer scheme (rule 2)', async () => {
    const res = await http(portal.url, 'GET', '/identity/user', { headers: { authorization: `Bearer ${valid}` } });
    expect(res.status).toBe(200);
  });
});
