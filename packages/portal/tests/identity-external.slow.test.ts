import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { decodeJwt } from 'jose';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, withToken, type HttpResult } from '@svc/test-support/http';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';

/**
 * External-provider mode (docs/api.md#credentials, section 5): SVC_JWT_JWKS_URL, SVC_JWT_ISSUER and
 * SVC_JWT_AUDIENCE point the portal at another OpenID provider. The provider here is a
 * separate node process (helpers/jwks-server.ts) with its own RS256 key.
 */

const ISSUER = 'http://idp.test/';
const AUDIENCE = 'svc-external';
const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'helpers', 'jwks-server.ts');

let idp: ChildProcess;
let idpUrl: string;
let idpStderr = '';
let portal: TestPortal;
let db: pg.Pool;

async function startIdp(): Promise<void> {
  idp = spawn(process.execPath, [SCRIPT], { stdio: ['pipe', 'pipe', 'pipe'] });
  idp.stderr?.setEncoding('utf8').on('data', (chunk: string) => (idpStderr += chunk));
  const lines = createInterface({ input: idp.stdout! });
  const port = await new Promise<number>((resolve, reject) => {
    idp.once('exit', (code) => reject(new Error(`jwks-server exited (${code}): ${idpStderr}`)));
    idp.once('error', reject);
    lines.once('line', (line) => {
      const { port } = JSON.parse(line) as { port: number };
      resolve(port);
    });
  });
  idpUrl = `http://127.0.0.1:${port}`;
}

async function stopIdp(): Promise<void> {
  if (!idp || idp.exitCode !== null || idp.signalCode !== null) return;
  const exited = new Promise((resolve) => idp.once('exit', resolve));
  idp.kill('SIGTERM');
  await exited;
}

/** A token from the external provider; see jwks-server.ts for the parameters. */
async function mint(params: Record<string, string> = {}): Promise<string> {
  const res = await fetch(`${idpUrl}/mint?${new URLSearchParams(params)}`);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`mint failed: ${res.status} ${text}`);
  return text;
}

function headerNames(res: HttpResult): string[] {
  return [...res.headers.keys()].filter((h) => h !== 'date').sort();
}

const licenses = (token: string) => http(portal.url, 'GET', '/api/licenses', { headers: withToken(token) });

beforeAll(async () => {
  await startIdp();
  portal = await startTestPortal({
    env: { SVC_JWT_JWKS_URL: `${idpUrl}/jwks.json`, SVC_JWT_ISSUER: ISSUER, SVC_JWT_AUDIENCE: AUDIENCE },
  });
  db = new pg.Pool({ connectionString: portal.databaseUrl, max: 2 });
  db.on('error', () => {});
});

afterAll(async () => {
  await db?.end();
  await portal?.close();
  await stopIdp();
});

describe('the external provider stand-in', () => {
  it('serves its JWKS and mints RS256 tokens', async () => {
    const jwks = await http(idpUrl, 'GET', '/jwks.json');
    expect(jwks.status).toBe(200);
    expect(jwks.body.keys).toHaveLength(1);
    expect(jwks.body.keys[0]).toMatchObject({ kty: 'RSA', kid: 'ext-key-1', alg: 'RS256', use: 'sig', e: 'AQAB' });
    expect(jwks.body.keys[0].d).toBeUndefined();
    const claims = decodeJwt(await mint({ sub: 's1', role: 'member', client_ids: 'acme,beta', exp: '2000000000' }));
    expect(claims).toMatchObject({
      sub: 's1',
      role: 'member',
      client_ids: ['acme', 'beta'],
      iss: ISSUER,
      aud: AUDIENCE,
      exp: 2000000000,
    });
  });
});

describe('external-provider mode: accepted tokens', () => {
  it('treats a token without role and client_ids claims as an admin', async () => {
    const token = await mint({ sub: 'ext-admin-1' });
    const res = await licenses(token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ licenses: [] });
  });

  it('treats role "admin" as an admin, with or without client_ids', async () => {
    expect((await licenses(await mint({ sub: 'ext-admin-2', role: 'admin' }))).status).toBe(200);
    expect((await licenses(await mint({ sub: 'ext-admin-3', role: 'admin', client_ids: 'acme' }))).status).toBe(200);
  });

  it("needs no sid and no cap on the lifetime: those are the provider's", async () => {
    const now = Math.floor(Date.now() / 1000);
    expect((await licenses(await mint({ sub: 'ext-admin-4', exp: String(now + 10 * 365 * 86_400) }))).status).toBe(200);
    // Within the allowed clock skew of 60 s.
    expect((await licenses(await mint({ sub: 'ext-admin-4', iat: String(now + 30) }))).status).toBe(200);
  });

  it('accepts an audience array that contains the configured audience', async () => {
    expect((await licenses(await mint({ aud: `other-api,${AUDIENCE}` }))).status).toBe(200);
  });

  it("records the token's e-mail (or else its subject) as the actor of admin changes", async () => {
    const withEmail = await mint({ sub: 'ext-admin-4', email: 'ops@idp.test' });
    const created = await http(portal.url, 'POST', '/api/licenses', {
      headers: withToken(withEmail),
      json: { tier: 'msp', client_id: 'acme', name: 'Acme MSP' },
    });
    expect(created.status).toBe(201);
    const noEmail = await mint({ sub: 'ext-admin-5' });
    const second = await http(portal.url, 'POST', '/api/licenses', {
      headers: withToken(noEmail),
      json: { tier: 'business', client_id: 'beta', name: 'Beta' },
    });
    expect(second.status).toBe(201);
    const { rows } = await db.query('SELECT client_id, created_by FROM licenses ORDER BY client_id');
    expect(rows).toEqual([
      { client_id: 'acme', created_by: 'ops@idp.test' },
      { client_id: 'beta', created_by: 'ext-admin-5' },
    ]);
  });

  it('scopes a member to its client_ids claim: 403 on admin-only endpoints, its own tier and events elsewhere', async () => {
    const member = await mint({ sub: 'ext-member-1', role: 'member', client_ids: 'acme' });
    const forbidden = await licenses(member);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toEqual({ error: 'Admin access required' });

    // delta holds an msp key: audit is allowed, and shows delta's events only.
    const admin = await mint({ sub: 'ext-admin-6' });
    for (const [tier, client_id] of [
      ['msp', 'delta'],
      ['business', 'epsilon'],
    ]) {
      expect(
        (
          await http(portal.url, 'POST', '/api/licenses', {
            headers: withToken(admin),
            json: { tier, client_id, name: client_id },
          })
        ).status,
      ).toBe(201);
    }
    const deltaMember = await mint({ sub: 'ext-member-3', role: 'member', client_ids: 'delta' });
    const audit = await http(portal.url, 'GET', '/api/audit', { headers: withToken(deltaMember) });
    expect(audit.status).toBe(200);
    expect(
      audit.body.events.map((e: { event_type: string; client_id: string }) => [e.event_type, e.client_id]),
    ).toEqual([['license_created', 'delta']]);
    const adminAudit = await http(portal.url, 'GET', '/api/audit', { headers: withToken(admin) });
    expect(adminAudit.body.events.some((e: { client_id: string }) => e.client_id === 'epsilon')).toBe(true);

    // A client without a key: professional tier, no audit.
    const other = await mint({ sub: 'ext-member-2', role: 'member', client_ids: 'nobody-co' });
    const noAudit = await http(portal.url, 'GET', '/api/audit', { headers: withToken(other) });
    expect(noAudit.status).toBe(403);
    expect(noAudit.body).toEqual({ error: 'Insufficient permissions for audit' });
  });

  it('treats client_ids without a role, a role without client_ids and a differently cased "Admin" as scoped, never admin', async () => {
    const cases: Record<string, string>[] = [
      { client_ids: 'acme' },
      { role: 'member' },
      { role: 'Admin' },
      { role: 'admin ', client_ids: 'acme' },
      { client_ids: '' },
    ];
    for (const params of cases) {
      const res = await licenses(await mint({ sub: 'ext-scoped', ...params }));
      expect({ params, status: res.status, body: res.body }).toEqual({
        params,
        status: 403,
        body: { error: 'Admin access required' },
      });
    }
  });
});

describe('external-provider mode: refused tokens', () => {
  it('gives every bad token the identical plain 401', async () => {
    const baseline = await licenses('not-a-jwt');
    expect(baseline.status).toBe(401);
    expect(baseline.text).toBe('{"error":"Unauthorized"}');
    expect(baseline.headers.get('content-type')).toMatch(/^application\/json/);

    const now = Math.floor(Date.now() / 1000);
    const valid = await mint({ sub: 'ext-member-9', role: 'member', client_ids: 'acme' });
    const [h, , s] = valid.split('.') as [string, string, string];
    // Drop role and client_ids to turn the member into an admin, keeping the signature.
    const elevated = Buffer.from(
      JSON.stringify({ sub: 'ext-member-9', iss: ISSUER, aud: AUDIENCE, iat: now, exp: now + 600 }),
    ).toString('base64url');
    const bad: Record<string, string> = {
      'wrong issuer': await mint({ iss: 'http://evil.test/' }),
      'issuer without trailing slash': await mint({ iss: 'http://idp.test' }),
      'wrong audience': await mint({ aud: 'svc-portal' }),
      expired: await mint({ exp: String(now - 3600) }),
      'missing exp': await mint({ exp: 'none' }),
      'missing sub': await mint({ nosub: '1' }),
      'issued in the future': await mint({ iat: String(now + 3600) }),
      'alg none': await mint({ alg: 'none' }),
      'HS256 keyed with the public key': await mint({ alg: 'HS256' }),
      'RS512 (not an accepted algorithm)': await mint({ alg: 'RS512' }),
      'different key, same kid': await mint({ key: 'rogue' }),
      'different key, unknown kid': await mint({ key: 'rogue', kid: 'ext-key-2' }),
      'tampered payload': `${h}.${elevated}.${s}`,
      'signature stripped': `${h}.${elevated}.`,
      empty: ' ',
    };
    for (const [name, token] of Object.entries(bad)) {
      const res = await licenses(token);
      expect({ name, status: res.status, text: res.text, headers: headerNames(res) }).toEqual({
        name,
        status: 401,
        text: baseline.text,
        headers: headerNames(baseline),
      });
    }
    const missing = await http(portal.url, 'GET', '/api/licenses');
    expect({ status: missing.status, text: missing.text, headers: headerNames(missing) }).toEqual({
      status: 401,
      text: baseline.text,
      headers: headerNames(baseline),
    });
  });

  it('refuses a valid external token in Authorization with the same plain 401, before any handler runs', async () => {
    const baseline = await licenses('not-a-jwt');
    const token = await mint({ sub: 'ext-admin-7' });
    expect((await licenses(token)).status).toBe(200);
    const before = (await db.query('SELECT count(*)::int AS n FROM licenses')).rows[0].n;
    for (const headers of [
      { authorization: `Bearer ${token}` },
      { authorization: `Bearer ${token}`, ...withToken(token) },
    ]) {
      const get = await http(portal.url, 'GET', '/api/licenses', { headers });
      expect({ status: get.status, text: get.text, headers: headerNames(get) }).toEqual({
        status: 401,
        text: baseline.text,
        headers: headerNames(baseline),
      });
      const post = await http(portal.url, 'POST', '/api/licenses', {
        headers,
        json: { tier: 'msp', client_id: 'gamma', name: 'Gamma' },
      });
      expect(post.status).toBe(401);
      expect(post.text).toBe(baseline.text);
    }
    expect((await db.query('SELECT count(*)::int AS n FROM licenses')).rows[0].n).toBe(before);
  });
});

describe("external-provider mode: the portal's own identity provider is off", () => {
  it('does not serve /identity (404) and keeps no signing key', async () => {
    const routes: [string, string][] = [
      ['POST', '/identity/token'],
      ['GET', '/identity/.well-known/jwks.json'],
      ['GET', '/identity/.well-known/openid-configuration'],
      ['GET', '/identity/user'],
      ['GET', '/identity/admin/users'],
      ['POST', '/identity/admin/users'],
      ['PATCH', '/identity/admin/users'],
      ['DELETE', '/identity/admin/users'],
    ];
    const token = await mint({ sub: 'ext-admin-8' });
    for (const [method, route] of routes) {
      const res = await http(portal.url, method, route, { headers: { authorization: `Bearer ${token}` } });
      expect({ method, route, status: res.status, body: res.body }).toEqual({
        method,
        route,
        status: 404,
        body: { error: `Not found: ${method} ${route}` },
      });
    }
    const login = await http(portal.url, 'POST', '/identity/token', {
      form: { grant_type: 'password', username: 'admin@test.local', password: 'admin-password-0123' },
    });
    expect(login.status).toBe(404);
    expect((await db.query('SELECT count(*)::int AS n FROM identity_signing_keys')).rows[0].n).toBe(0);
  });
});
