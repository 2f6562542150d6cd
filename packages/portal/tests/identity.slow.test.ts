import { createHash, randomBytes } from 'node:crypto';
import {
  createRemoteJWKSet,
  decodeJwt,
  generateKeyPair,
  importJWK,
  jwtVerify,
  SignJWT,
  UnsecuredJWT,
  type CryptoKey,
  type JWK,
  type JWTPayload,
} from 'jose';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenVerifier } from '../src/auth/jwt.ts';
import { http, withToken, type HttpResult } from '@svc/test-support/http';
import { decryptPrivateJwk } from '../src/identity/key-encryption.ts';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  KEY_ENCRYPTION_KEY,
  login,
  startTestPortal,
  type TestPortal,
} from '@svc/test-support/portal';

/**
 * The portal's own identity provider (docs/api.md#identity-provider, section 5; docs/api.md#credentials).
 * Every describe block has its own portal and database: /identity/token is limited to
 * 30 requests a minute per address, and each block stays well under that.
 */

const ISSUER = 'http://portal.test/identity';
const AUDIENCE = 'svc-portal';
const REFRESH_TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;
const UNAUTHORIZED_BEARER = 'Bearer realm="svc-identity"';

/** A clock the test moves by hand; starts on a whole second near real time (jose checks exp against the real clock). */
function fakeClock() {
  let t = Math.floor(Date.now() / 1000) * 1000;
  return {
    now: () => new Date(t),
    advance(ms: number) {
      t += ms;
    },
    seconds: () => Math.floor(t / 1000),
    date: () => new Date(t),
  };
}

function tokenRequest(portal: TestPortal, form: Record<string, string>): Promise<HttpResult> {
  return http(portal.url, 'POST', '/identity/token', { form });
}

function passwordGrant(portal: TestPortal, username: string, password: string): Promise<HttpResult> {
  return tokenRequest(portal, { grant_type: 'password', username, password });
}

function refreshGrant(portal: TestPortal, refreshToken: string): Promise<HttpResult> {
  return tokenRequest(portal, { grant_type: 'refresh_token', refresh_token: refreshToken });
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

interface CreatedUser {
  id: string;
  email: string;
  password: string;
  role: 'admin' | 'member';
  client_ids: string[];
}

async function createUser(
  portal: TestPortal,
  body: { email?: string; password?: string; role?: 'admin' | 'member'; client_ids?: string[] } = {},
): Promise<CreatedUser> {
  const email = body.email ?? `user-${randomBytes(4).toString('hex')}@example.test`;
  const password = body.password ?? `pw-${randomBytes(8).toString('hex')}`;
  const role = body.role ?? 'member';
  const client_ids = body.client_ids ?? (role === 'member' ? ['acme'] : []);
  const res = await http(portal.url, 'POST', '/identity/admin/users', {
    headers: bearer(await portal.adminToken()),
    json: { email, password, role, client_ids },
  });
  if (res.status !== 201) throw new Error(`create user failed: ${res.status} ${res.text}`);
  return { id: res.body.user.id, email, password, role, client_ids };
}

function openDb(portal: TestPortal): pg.Pool {
  const pool = new pg.Pool({ connectionString: portal.databaseUrl, max: 3 });
  pool.on('error', () => {});
  return pool;
}

async function userRow(db: pg.Pool, id: string) {
  const { rows } = await db.query('SELECT * FROM users WHERE id = $1', [id]);
  return rows[0] as
    | {
        id: string;
        email: string;
        password_hash: string;
        role: string;
        client_ids: string[];
        created_at: Date;
        updated_at: Date;
      }
    | undefined;
}

/** The failed-login count of an e-mail as typed at login (none: zero, not locked). */
async function failuresOf(db: pg.Pool, email: string): Promise<{ failed_logins: number; locked_until: Date | null }> {
  const { rows } = await db.query(
    'SELECT failed_logins, locked_until FROM login_failures WHERE email_normalized = $1',
    [email.trim().toLowerCase()],
  );
  return (
    (rows[0] as { failed_logins: number; locked_until: Date | null } | undefined) ?? {
      failed_logins: 0,
      locked_until: null,
    }
  );
}

async function adminId(db: pg.Pool): Promise<string> {
  const { rows } = await db.query('SELECT id FROM users WHERE email_normalized = $1', [ADMIN_EMAIL]);
  return rows[0].id as string;
}

/** The portal's own signing key, read from the database, to mint tokens the tests control. */
async function portalSigningKey(db: pg.Pool): Promise<{ kid: string; key: CryptoKey; publicJwk: JWK }> {
  const { rows } = await db.query('SELECT kid, private_jwk_encrypted, public_jwk FROM identity_signing_keys');
  expect(rows).toHaveLength(1);
  const privateJwk = decryptPrivateJwk(
    Buffer.from(KEY_ENCRYPTION_KEY, 'hex'),
    rows[0].kid,
    rows[0].private_jwk_encrypted,
  );
  return {
    kid: rows[0].kid,
    key: (await importJWK(privateJwk as JWK, 'EdDSA')) as CryptoKey,
    publicJwk: rows[0].public_jwk as JWK,
  };
}

function sha256(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

function headerNames(res: HttpResult): string[] {
  return [...res.headers.keys()].filter((h) => h !== 'date').sort();
}

describe('POST /identity/token: password grant and the access token', () => {
  const clock = fakeClock();
  let portal: TestPortal;
  let db: pg.Pool;
  beforeAll(async () => {
    portal = await startTestPortal({ now: clock.now });
    db = openDb(portal);
  });
  afterAll(async () => {
    await db.end();
    await portal.close();
  });

  it('answers a form-encoded password grant with a Bearer token, expires_in 3600 and a refresh token, not cacheable', async () => {
    const res = await passwordGrant(portal, ADMIN_EMAIL, ADMIN_PASSWORD);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('pragma')).toBe('no-cache');
    expect(Object.keys(res.body).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'token_type']);
    expect(res.body.token_type).toBe('Bearer');
    expect(res.body.expires_in).toBe(3600);
    expect(res.body.refresh_token).toMatch(REFRESH_TOKEN_RE);
    expect(res.body.access_token.split('.')).toHaveLength(3);
  });

  it('issues an EdDSA JWT that verifies independently against the published JWKS (iss, aud, sub, exp = iat + 3600, kid)', async () => {
    const res = await passwordGrant(portal, ADMIN_EMAIL, ADMIN_PASSWORD);
    expect(res.status).toBe(200);
    const jwksRes = await http(portal.url, 'GET', '/identity/.well-known/jwks.json');
    expect(jwksRes.status).toBe(200);
    const jwks = createRemoteJWKSet(new URL(`${portal.url}/identity/.well-known/jwks.json`));
    const { payload, protectedHeader } = await jwtVerify(res.body.access_token, jwks, {
      algorithms: ['EdDSA'],
      issuer: ISSUER,
      audience: AUDIENCE,
      requiredClaims: ['exp', 'sub', 'iat'],
    });
    expect(protectedHeader).toEqual({ alg: 'EdDSA', kid: jwksRes.body.keys[0].kid, typ: 'JWT' });
    const iat = clock.seconds();
    expect(payload).toEqual({
      sub: await adminId(db),
      email: ADMIN_EMAIL,
      role: 'admin',
      client_ids: [],
      iss: ISSUER,
      aud: AUDIENCE,
      iat,
      exp: iat + 3600,
      jti: expect.stringMatching(/^[0-9a-f]{24}$/),
      // The refresh-token family (login) the token belongs to; revoking it ends the token.
      sid: expect.stringMatching(/^[0-9a-f]{24}$/),
    });
    // The wrong audience or issuer must not verify: the checks above are real.
    await expect(
      jwtVerify(res.body.access_token, jwks, { algorithms: ['EdDSA'], issuer: ISSUER, audience: 'other' }),
    ).rejects.toThrow();
    await expect(
      jwtVerify(res.body.access_token, jwks, {
        algorithms: ['EdDSA'],
        issuer: 'http://portal.test',
        audience: AUDIENCE,
      }),
    ).rejects.toThrow();
  });

  it("access tokens stop verifying 3600 s after issue on the verifier's clock", async () => {
    const res = await passwordGrant(portal, ADMIN_EMAIL, ADMIN_PASSWORD);
    const issuedAt = clock.date().getTime();
    const at = (seconds: number) =>
      createTokenVerifier(portal.ctx.config, portal.ctx.db, () => new Date(issuedAt + seconds * 1000));
    expect((await at(3599).verify(res.body.access_token))?.sub).toBe(await adminId(db));
    expect(await at(3600).verify(res.body.access_token)).toBeNull();
    expect(await at(86_400).verify(res.body.access_token)).toBeNull();
  });

  it('publishes exactly the public half of the signing key in the JWKS, cacheable', async () => {
    const res = await http(portal.url, 'GET', '/identity/.well-known/jwks.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    expect(res.body.keys).toHaveLength(1);
    const [key] = res.body.keys;
    expect(Object.keys(key).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x']);
    expect(key).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
    const stored = await portalSigningKey(db);
    expect(key.kid).toBe(stored.kid);
    expect(key).toEqual(stored.publicJwk);
    expect(res.text).not.toContain('"d"');
  });

  it('accepts a JSON body as well', async () => {
    const res = await http(portal.url, 'POST', '/identity/token', {
      json: { grant_type: 'password', username: ADMIN_EMAIL, password: ADMIN_PASSWORD },
    });
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe('Bearer');
    expect(res.body.expires_in).toBe(3600);
    expect(res.body.refresh_token).toMatch(REFRESH_TOKEN_RE);
  });

  it('matches the username (e-mail) case-insensitively', async () => {
    const res = await passwordGrant(portal, '  ADMIN@Test.LOCAL ', ADMIN_PASSWORD);
    expect(res.status).toBe(200);
    expect(decodeJwt(res.body.access_token).sub).toBe(await adminId(db));
  });

  it('refuses a wrong password and an unknown user with the same invalid_grant body', async () => {
    const user = await createUser(portal);
    const wrong = await passwordGrant(portal, user.email, `${user.password}x`);
    const unknown = await passwordGrant(portal, 'nobody@example.test', user.password);
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_grant', error_description: 'Invalid username or password' });
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
    expect(headerNames(wrong)).toEqual(headerNames(unknown));
    // The password is case-sensitive, the e-mail is not.
    const upper = await passwordGrant(portal, user.email, user.password.toUpperCase());
    expect(upper.status).toBe(400);
    const ok = await passwordGrant(portal, user.email.toUpperCase(), user.password);
    expect(ok.status).toBe(200);
  });

  it('answers invalid_request for missing fields and unsupported_grant_type for other grants', async () => {
    const cases: [Record<string, string>, number, { error: string; error_description: string }][] = [
      [
        { grant_type: 'password', password: ADMIN_PASSWORD },
        400,
        { error: 'invalid_request', error_description: 'username and password are required' },
      ],
      [
        { grant_type: 'password', username: ADMIN_EMAIL },
        400,
        { error: 'invalid_request', error_description: 'username and password are required' },
      ],
      [
        { grant_type: 'password', username: ADMIN_EMAIL, password: '' },
        400,
        { error: 'invalid_request', error_description: 'username and password are required' },
      ],
      [
        { username: ADMIN_EMAIL, password: ADMIN_PASSWORD },
        400,
        { error: 'invalid_request', error_description: 'grant_type must be password or refresh_token' },
      ],
      [
        { grant_type: 'refresh_token' },
        400,
        { error: 'invalid_request', error_description: 'refresh_token is required' },
      ],
      [
        { grant_type: 'client_credentials', username: ADMIN_EMAIL, password: ADMIN_PASSWORD },
        400,
        { error: 'unsupported_grant_type', error_description: 'grant_type must be password or refresh_token' },
      ],
    ];
    for (const [form, status, body] of cases) {
      const res = await tokenRequest(portal, form);
      expect({ form, status: res.status, body: res.body }).toEqual({ form, status, body });
    }
  });

  it('answers invalid_request (not a framework error) for a body that is not a token request at all', async () => {
    const empty = await http(portal.url, 'POST', '/identity/token');
    expect(empty.status).toBe(400);
    expect(empty.body).toEqual({
      error: 'invalid_request',
      error_description: 'Malformed token request: body must be object',
    });
    expect(empty.headers.get('cache-control')).toBe('no-store');
    const array = await http(portal.url, 'POST', '/identity/token', { json: [1, 2] });
    expect(array.status).toBe(400);
    expect(array.body).toEqual({
      error: 'invalid_request',
      error_description: 'Malformed token request: body must be object',
    });
    const tooLong = await tokenRequest(portal, {
      grant_type: 'password',
      username: `${'a'.repeat(400)}@example.test`,
      password: 'x',
    });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body).toEqual({
      error: 'invalid_request',
      error_description: 'Malformed token request: body/username must NOT have more than 320 characters',
    });
  });

  it('stores passwords as argon2id hashes only', async () => {
    const user = await createUser(portal);
    const { rows } = await db.query('SELECT id, email, password_hash FROM users');
    expect(rows.length).toBeGreaterThanOrEqual(2);
    for (const row of rows) {
      expect(row.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/);
      expect(row.password_hash).not.toContain(ADMIN_PASSWORD);
      expect(row.password_hash).not.toContain(user.password);
    }
    const { rows: dump } = await db.query('SELECT row_to_json(u)::text AS j FROM users u');
    for (const { j } of dump) {
      expect(j).not.toContain(ADMIN_PASSWORD);
      expect(j).not.toContain(user.password);
    }
  });

  it("GET /identity/user answers the bearer token's user without its password hash", async () => {
    const user = await createUser(portal, { email: 'Mixed.Case@Example.Test', client_ids: ['acme', 'beta'] });
    const token = await login(portal.url, 'mixed.case@example.test', user.password);
    const res = await http(portal.url, 'GET', '/identity/user', { headers: bearer(token) });
    expect(res.status).toBe(200);
    const row = await userRow(db, user.id);
    expect(res.body).toEqual({
      user: {
        id: user.id,
        email: 'Mixed.Case@Example.Test',
        role: 'member',
        client_ids: ['acme', 'beta'],
        created_at: row!.created_at.toISOString(),
        updated_at: row!.updated_at.toISOString(),
      },
    });
    expect(res.body.user.id).toMatch(/^usr_[0-9a-f]{16}$/);
    expect(res.text).not.toContain('argon2');
    expect(res.text).not.toContain('password');
  });

  it('GET /identity/user answers 401 with WWW-Authenticate: Bearer for a missing, malformed or invalid token', async () => {
    const token = await portal.adminToken();
    const variants: (Record<string, string> | undefined)[] = [
      undefined,
      { authorization: 'Bearer' },
      { authorization: 'Bearer not-a-jwt' },
      { authorization: `Basic ${Buffer.from(`${ADMIN_EMAIL}:${ADMIN_PASSWORD}`).toString('base64')}` },
      { authorization: `Bearer ${token}x` },
      { authorization: `Bearer ${token} extra` },
      // The bearer scheme, not the portal's header.
      withToken(token),
    ];
    for (const headers of variants) {
      const res = await http(portal.url, 'GET', '/identity/user', { headers });
      expect({ headers, status: res.status, body: res.body }).toEqual({
        headers,
        status: 401,
        body: { error: 'Unauthorized' },
      });
      expect(res.headers.get('www-authenticate')).toBe(UNAUTHORIZED_BEARER);
    }
    const ok = await http(portal.url, 'GET', '/identity/user', { headers: { authorization: `bearer ${token}` } });
    expect(ok.status).toBe(200);
  });

  it('refuses forged, expired, foreign and malformed tokens on /identity/user and on /api (X-Identity-Token)', async () => {
    const { kid, key } = await portalSigningKey(db);
    const sub = await adminId(db);
    const realNow = Math.floor(Date.now() / 1000);
    const sign = (claims: JWTPayload, opts: { key?: CryptoKey | Uint8Array; alg?: string; kid?: string } = {}) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: opts.alg ?? 'EdDSA', kid: opts.kid ?? kid, typ: 'JWT' })
        .sign(opts.key ?? key);
    // The portal's own tokens must name a live session (sid); the admin's login is one.
    const sid = decodeJwt(await portal.adminToken())['sid'];
    const good: JWTPayload = { sub, sid, iss: ISSUER, aud: AUDIENCE, iat: realNow, exp: realNow + 600 };

    // Control: a token the test signs with the portal's key and correct claims is accepted,
    // so every refusal below is caused by the one thing that differs.
    const control = await sign(good);
    expect((await http(portal.url, 'GET', '/identity/user', { headers: bearer(control) })).status).toBe(200);
    expect((await http(portal.url, 'GET', '/api/licenses', { headers: withToken(control) })).status).toBe(200);

    const { privateKey: otherKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const jwksText = (await http(portal.url, 'GET', '/identity/.well-known/jwks.json')).text;
    const [h, p, s] = control.split('.') as [string, string, string];
    const tamperedPayload = Buffer.from(JSON.stringify({ ...good, sub: 'usr_0000000000000000' })).toString('base64url');
    const forged: Record<string, string> = {
      expired: await sign({ ...good, iat: realNow - 7200, exp: realNow - 3600 }),
      'not yet valid': await sign({ ...good, nbf: realNow + 3600 }),
      'wrong issuer': await sign({ ...good, iss: 'http://evil.test/identity' }),
      'issuer with trailing slash': await sign({ ...good, iss: `${ISSUER}/` }),
      'wrong audience': await sign({ ...good, aud: 'someone-else' }),
      'missing exp': await sign({ sub, sid, iss: ISSUER, aud: AUDIENCE, iat: realNow }),
      'missing sub': await sign({ sid, iss: ISSUER, aud: AUDIENCE, iat: realNow, exp: realNow + 600 }),
      'missing sid': await sign({ sub, iss: ISSUER, aud: AUDIENCE, iat: realNow, exp: realNow + 600 }),
      'unknown user': await sign({ ...good, sub: 'usr_ffffffffffffffff' }),
      'other key, same kid': await sign(good, { key: otherKey }),
      'other key, other kid': await sign(good, { key: otherKey, kid: 'other' }),
      'alg none': new UnsecuredJWT(good).encode(),
      'HS256 keyed with the JWKS': await sign(good, { alg: 'HS256', key: new TextEncoder().encode(jwksText) }),
      'tampered payload': `${h}.${tamperedPayload}.${s}`,
      'signature stripped': `${h}.${p}.`,
      garbage: 'not-a-jwt',
    };
    const baseline = await http(portal.url, 'GET', '/api/licenses', { headers: withToken('x') });
    expect(baseline.status).toBe(401);
    expect(baseline.body).toEqual({ error: 'Unauthorized' });
    for (const [name, token] of Object.entries(forged)) {
      const idp = await http(portal.url, 'GET', '/identity/user', { headers: bearer(token) });
      expect({ name, status: idp.status, body: idp.body, wwwAuth: idp.headers.get('www-authenticate') }).toEqual({
        name,
        status: 401,
        body: { error: 'Unauthorized' },
        wwwAuth: UNAUTHORIZED_BEARER,
      });
      const api = await http(portal.url, 'GET', '/api/licenses', { headers: withToken(token) });
      expect({ name, status: api.status, text: api.text, headers: headerNames(api) }).toEqual({
        name,
        status: 401,
        text: baseline.text,
        headers: headerNames(baseline),
      });
    }
  });

  it('accepts its JWT in X-Identity-Token on an admin /api endpoint and refuses it in Authorization with the plain 401', async () => {
    const token = await portal.adminToken();
    const ok = await http(portal.url, 'GET', '/api/licenses', { headers: withToken(token) });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ licenses: [] });

    const inAuthorization = await http(portal.url, 'GET', '/api/licenses', { headers: bearer(token) });
    expect(inAuthorization.status).toBe(401);
    expect(inAuthorization.text).toBe('{"error":"Unauthorized"}');
    // Identical to what a fake token gets, under either header.
    const fakeAuth = await http(portal.url, 'GET', '/api/licenses', { headers: bearer('fake') });
    const fakeHeader = await http(portal.url, 'GET', '/api/licenses', { headers: withToken('fake') });
    for (const other of [fakeAuth, fakeHeader]) {
      expect(other.status).toBe(401);
      expect(other.text).toBe(inAuthorization.text);
      expect(headerNames(other)).toEqual(headerNames(inAuthorization));
    }
    // Both headers at once: Authorization still wins the refusal, the handler never runs.
    const both = await http(portal.url, 'POST', '/api/licenses', {
      headers: { ...bearer(token), ...withToken(token) },
      json: { tier: 'msp', client_id: 'c1', name: 'n' },
    });
    expect(both.status).toBe(401);
    expect(both.text).toBe('{"error":"Unauthorized"}');
    const { rows } = await db.query('SELECT count(*)::int AS n FROM licenses');
    expect(rows[0].n).toBe(0);
  });

  it('serves the OpenID discovery document', async () => {
    const res = await http(portal.url, 'GET', '/identity/.well-known/openid-configuration');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      issuer: ISSUER,
      jwks_uri: `${ISSUER}/.well-known/jwks.json`,
      token_endpoint: `${ISSUER}/token`,
      revocation_endpoint: `${ISSUER}/revoke`,
      revocation_endpoint_auth_methods_supported: ['none'],
      userinfo_endpoint: `${ISSUER}/user`,
      grant_types_supported: ['password', 'refresh_token'],
      response_types_supported: ['token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['EdDSA'],
      token_endpoint_auth_methods_supported: ['none'],
    });
  });
});

describe('POST /identity/token: refresh grant', () => {
  const clock = fakeClock();
  let portal: TestPortal;
  let db: pg.Pool;
  let user: CreatedUser;
  beforeAll(async () => {
    portal = await startTestPortal({ now: clock.now });
    db = openDb(portal);
    user = await createUser(portal);
  });
  afterAll(async () => {
    await db.end();
    await portal.close();
  });

  async function freshLogin() {
    const res = await passwordGrant(portal, user.email, user.password);
    expect(res.status).toBe(200);
    return res.body as { access_token: string; refresh_token: string };
  }

  const refused = { error: 'invalid_grant', error_description: 'Invalid or expired refresh token' };

  it('rotates: each refresh answers a new refresh token and a working access token; the old one is refused afterwards', async () => {
    const first = await freshLogin();
    const second = await refreshGrant(portal, first.refresh_token);
    expect(second.status).toBe(200);
    expect(second.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(second.body).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'token_type']);
    expect(second.body.token_type).toBe('Bearer');
    expect(second.body.expires_in).toBe(3600);
    expect(second.body.refresh_token).toMatch(REFRESH_TOKEN_RE);
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    expect(decodeJwt(second.body.access_token).sub).toBe(user.id);
    const me = await http(portal.url, 'GET', '/identity/user', { headers: bearer(second.body.access_token) });
    expect(me.status).toBe(200);
    expect(me.body.user.id).toBe(user.id);

    const third = await refreshGrant(portal, second.body.refresh_token);
    expect(third.status).toBe(200);
    expect(third.body.refresh_token).not.toBe(second.body.refresh_token);
    expect(third.body.refresh_token).not.toBe(first.refresh_token);

    // All three belong to one family; the two used ones carry used_at = the clock's now.
    const { rows } = await db.query(
      'SELECT token_hash, family_id, used_at, revoked_at, expires_at FROM refresh_tokens WHERE user_id = $1 ORDER BY created_at, used_at NULLS LAST',
      [user.id],
    );
    const byHash = new Map(rows.map((r) => [r.token_hash as string, r]));
    const r1 = byHash.get(sha256(first.refresh_token));
    const r2 = byHash.get(sha256(second.body.refresh_token));
    const r3 = byHash.get(sha256(third.body.refresh_token));
    expect(r1 && r2 && r3).toBeTruthy();
    expect(new Set([r1.family_id, r2.family_id, r3.family_id]).size).toBe(1);
    expect(r1.used_at).toEqual(clock.date());
    expect(r2.used_at).toEqual(clock.date());
    expect(r3.used_at).toBeNull();
    expect(r3.expires_at).toEqual(new Date(clock.date().getTime() + 30 * 86_400_000));

    const again = await refreshGrant(portal, second.body.refresh_token);
    expect(again.status).toBe(400);
    expect(again.body).toEqual(refused);
  });

  it('revokes the whole family when a rotated token is reused: the newest token stops working too, other families do not', async () => {
    const a1 = await freshLogin();
    const other = await freshLogin();
    const a2 = (await refreshGrant(portal, a1.refresh_token)).body;
    const a3 = (await refreshGrant(portal, a2.refresh_token)).body;
    expect(a3.refresh_token).toMatch(REFRESH_TOKEN_RE);

    const reuse = await refreshGrant(portal, a1.refresh_token);
    expect(reuse.status).toBe(400);
    expect(reuse.body).toEqual(refused);

    const newest = await refreshGrant(portal, a3.refresh_token);
    expect(newest.status).toBe(400);
    expect(newest.body).toEqual(refused);

    const { rows } = await db.query(
      'SELECT token_hash, revoked_at FROM refresh_tokens WHERE family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = $1)',
      [sha256(a1.refresh_token)],
    );
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row.revoked_at).toEqual(clock.date());

    // A separate login (another family) is untouched.
    const unaffected = await refreshGrant(portal, other.refresh_token);
    expect(unaffected.status).toBe(200);
  });

  it('refuses an unknown refresh token without revoking anything', async () => {
    const live = await freshLogin();
    const res = await refreshGrant(portal, randomBytes(32).toString('base64url'));
    expect(res.status).toBe(400);
    expect(res.body).toEqual(refused);
    expect((await refreshGrant(portal, live.refresh_token)).status).toBe(200);
  });

  it('stores refresh tokens only as SHA-256 hashes', async () => {
    const issued = await freshLogin();
    const { rows } = await db.query('SELECT token_hash FROM refresh_tokens WHERE token_hash = $1', [
      sha256(issued.refresh_token),
    ]);
    expect(rows).toHaveLength(1);
    expect(rows[0].token_hash).toMatch(/^[0-9a-f]{64}$/);
    const { rows: plain } = await db.query(
      'SELECT count(*)::int AS n FROM refresh_tokens t WHERE position($1 in row_to_json(t)::text) > 0',
      [issued.refresh_token],
    );
    expect(plain[0].n).toBe(0);
    const { rows: all } = await db.query('SELECT token_hash FROM refresh_tokens');
    for (const row of all) expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses an expired refresh token (30 days) and accepts one just before expiry', async () => {
    const early = await freshLogin();
    const late = await freshLogin();
    clock.advance(30 * 86_400_000 - 1000);
    const before = await refreshGrant(portal, early.refresh_token);
    expect(before.status).toBe(200);
    clock.advance(1000);
    const at = await refreshGrant(portal, late.refresh_token);
    expect(at.status).toBe(400);
    expect(at.body).toEqual(refused);
    // An expired token is not a reuse: nothing else of the family gets revoked.
    const { rows } = await db.query('SELECT used_at, revoked_at FROM refresh_tokens WHERE token_hash = $1', [
      sha256(late.refresh_token),
    ]);
    expect(rows[0]).toEqual({ used_at: null, revoked_at: null });
  });
});

describe('throttling of failed logins', () => {
  const clock = fakeClock();
  let portal: TestPortal;
  let db: pg.Pool;
  beforeAll(async () => {
    portal = await startTestPortal({ now: clock.now });
    db = openDb(portal);
  });
  afterAll(async () => {
    await db.end();
    await portal.close();
  });

  const locked = { error: 'too_many_attempts', error_description: 'Too many failed logins; try again later' };

  it('locks the account after 5 failures, even for the right password, until the lock expires; the lock then doubles', async () => {
    const user = await createUser(portal);
    for (let i = 1; i <= 5; i++) {
      const res = await passwordGrant(portal, user.email, 'wrong-password-000');
      expect({ i, status: res.status, error: res.body.error }).toEqual({ i, status: 400, error: 'invalid_grant' });
    }
    expect(await failuresOf(db, user.email)).toEqual({
      failed_logins: 5,
      locked_until: new Date(clock.date().getTime() + 30_000),
    });

    const right = await passwordGrant(portal, user.email, user.password);
    expect(right.status).toBe(429);
    expect(right.body).toEqual(locked);
    expect(right.headers.get('retry-after')).toBe('30');
    expect(right.headers.get('cache-control')).toBe('no-store');
    // The e-mail is matched case-insensitively for the lock as well.
    expect((await passwordGrant(portal, user.email.toUpperCase(), user.password)).status).toBe(429);

    clock.advance(29_000);
    const still = await passwordGrant(portal, user.email, user.password);
    expect(still.status).toBe(429);
    expect(still.headers.get('retry-after')).toBe('1');
    // Attempts while locked are not counted (and not even checked).
    expect((await failuresOf(db, user.email)).failed_logins).toBe(5);

    clock.advance(1_000);
    // Expired: one more failure locks again, for twice as long.
    const sixth = await passwordGrant(portal, user.email, 'wrong-password-000');
    expect(sixth.status).toBe(400);
    expect(sixth.body.error).toBe('invalid_grant');
    const relocked = await passwordGrant(portal, user.email, user.password);
    expect(relocked.status).toBe(429);
    expect(relocked.headers.get('retry-after')).toBe('60');

    clock.advance(60_000);
    const ok = await passwordGrant(portal, user.email, user.password);
    expect(ok.status).toBe(200);
    expect(await failuresOf(db, user.email)).toEqual({ failed_logins: 0, locked_until: null });
  });

  it('resets the count on a successful login before the lock', async () => {
    const user = await createUser(portal);
    for (let i = 0; i < 4; i++)
      expect((await passwordGrant(portal, user.email, 'wrong-password-000')).status).toBe(400);
    expect((await failuresOf(db, user.email)).failed_logins).toBe(4);
    expect((await passwordGrant(portal, user.email, user.password)).status).toBe(200);
    expect(await failuresOf(db, user.email)).toEqual({ failed_logins: 0, locked_until: null });
    for (let i = 0; i < 4; i++)
      expect((await passwordGrant(portal, user.email, 'wrong-password-000')).status).toBe(400);
    // 8 failures in all, but never 5 in a row: not locked.
    const res = await passwordGrant(portal, user.email, user.password);
    expect(res.status).toBe(200);
  });
});

describe('throttling is per account', () => {
  // A fixed clock: on the wall clock the victim's and the ghost's Retry-After differed
  // whenever the six slow password checks in between crossed a second boundary.
  const clock = fakeClock();
  let portal: TestPortal;
  let db: pg.Pool;
  beforeAll(async () => {
    portal = await startTestPortal({ now: clock.now });
    db = openDb(portal);
  });
  afterAll(async () => {
    await db.end();
    await portal.close();
  });

  it('locks only the attacked e-mail; an e-mail without an account locks the same way, so a lock reveals no account', async () => {
    const victim = await createUser(portal);
    const bystander = await createUser(portal);
    for (let i = 0; i < 5; i++) await passwordGrant(portal, victim.email, 'wrong-password-000');
    const ghost = [];
    for (let i = 0; i < 6; i++) ghost.push(await passwordGrant(portal, 'Ghost@Example.test', 'wrong-password-000'));
    const victimLocked = await passwordGrant(portal, victim.email, victim.password);
    expect(victimLocked.status).toBe(429);
    // The same answers, in the same order, for an account and for no account.
    expect(ghost.map((r) => r.status)).toEqual([400, 400, 400, 400, 400, 429]);
    expect(ghost[5]!.body).toEqual(victimLocked.body);
    expect(ghost[5]!.headers.get('retry-after')).toBe(victimLocked.headers.get('retry-after'));
    expect(await failuresOf(db, 'ghost@example.test')).toMatchObject({ failed_logins: 5 });
    expect((await passwordGrant(portal, bystander.email, bystander.password)).status).toBe(200);
    expect(await failuresOf(db, bystander.email)).toEqual({ failed_logins: 0, locked_until: null });
    expect(
      (await db.query("SELECT count(*)::int AS n FROM users WHERE email_normalized = 'ghost@example.test'")).rows[0].n,
    ).toBe(0);
  });
});

describe('per-address rate limit on /identity/token', () => {
  let portal: TestPortal;
  beforeAll(async () => {
    portal = await startTestPortal();
  });
  afterAll(() => portal.close());

  it('answers 429 after 30 requests in a minute from one address, and only on /identity/token', async () => {
    for (let i = 1; i <= 30; i++) {
      const res = await passwordGrant(portal, `nobody${i}@example.test`, 'wrong-password-000');
      expect({ i, status: res.status }).toEqual({ i, status: 400 });
      expect(res.headers.get('x-ratelimit-limit')).toBe('30');
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(30 - i));
    }
    const limited = await passwordGrant(portal, ADMIN_EMAIL, ADMIN_PASSWORD);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: 'Too many requests, slow down' });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    // Other identity routes are not limited by it.
    expect((await http(portal.url, 'GET', '/identity/.well-known/jwks.json')).status).toBe(200);
    expect((await http(portal.url, 'GET', '/identity/user')).status).toBe(401);
  });
});

describe('/identity/admin/users', () => {
  const clock = fakeClock();
  let portal: TestPortal;
  let db: pg.Pool;
  beforeAll(async () => {
    portal = await startTestPortal({ now: clock.now });
    db = openDb(portal);
  });
  afterAll(async () => {
    await db.end();
    await portal.close();
  });

  async function auditFor(userId: string) {
    const { rows } = await db.query(
      `SELECT event_type, actor, client_id, session_id, data, data::text AS raw FROM audit_events WHERE data->>'user_id' = $1 ORDER BY id`,
      [userId],
    );
    return rows as {
      event_type: string;
      actor: string;
      client_id: string | null;
      session_id: string | null;
      data: Record<string, unknown>;
      raw: string;
    }[];
  }

  it('creates a member with client_ids (201), lists it, and audits the creation without the password', async () => {
    const admin = await portal.adminToken();
    const res = await http(portal.url, 'POST', '/identity/admin/users', {
      headers: bearer(admin),
      json: {
        email: 'Alice@Example.Test',
        password: 'alice-password-123',
        role: 'member',
        client_ids: ['acme', 'beta'],
      },
    });
    expect(res.status).toBe(201);
    const row = await userRow(db, res.body.user.id);
    expect(row).toBeDefined();
    expect(res.body).toEqual({
      user: {
        id: row!.id,
        email: 'Alice@Example.Test',
        role: 'member',
        client_ids: ['acme', 'beta'],
        created_at: row!.created_at.toISOString(),
        updated_at: row!.updated_at.toISOString(),
      },
    });
    expect(row).toMatchObject({ email: 'Alice@Example.Test', role: 'member', client_ids: ['acme', 'beta'] });
    expect(row!.password_hash).toMatch(/^\$argon2id\$/);
    expect(res.text).not.toContain('alice-password-123');
    expect(res.text).not.toContain('argon2');

    const list = await http(portal.url, 'GET', '/identity/admin/users', { headers: bearer(admin) });
    expect(list.status).toBe(200);
    expect(list.body.users.map((u: { email: string }) => u.email)).toEqual([ADMIN_EMAIL, 'Alice@Example.Test']);
    expect(list.body.users[1]).toEqual(res.body.user);
    expect(list.text).not.toContain('argon2');
    expect(list.text).not.toContain('password');

    const audit = await auditFor(row!.id);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      event_type: 'user_created',
      actor: ADMIN_EMAIL,
      data: { user_id: row!.id, email: 'Alice@Example.Test', role: 'member', client_ids: ['acme', 'beta'] },
    });
    expect(audit[0]!.raw).not.toContain('alice-password-123');
    expect(audit[0]!.raw).not.toContain('argon2');
    expect(audit[0]!.raw).not.toContain('password');

    // The new user can log in.
    expect((await passwordGrant(portal, 'alice@example.test', 'alice-password-123')).status).toBe(200);
  });

  it('refuses a member without client_ids, a duplicate e-mail (any case) and malformed bodies', async () => {
    const admin = await portal.adminToken();
    const post = (json: unknown) => http(portal.url, 'POST', '/identity/admin/users', { headers: bearer(admin), json });
    const before = (await db.query('SELECT count(*)::int AS n FROM users')).rows[0].n;

    const noClients = await post({ email: 'bob@example.test', password: 'bob-password-123', role: 'member' });
    expect(noClients.status).toBe(400);
    expect(noClients.body).toEqual({ error: 'A member needs at least one client id in client_ids' });
    // The role defaults to member, which needs client_ids.
    expect((await post({ email: 'bob@example.test', password: 'bob-password-123' })).body).toEqual({
      error: 'A member needs at least one client id in client_ids',
    });
    expect((await post({ email: 'bob@example.test', password: 'bob-password-123', client_ids: [] })).status).toBe(400);

    const dup = await post({ email: 'ADMIN@TEST.LOCAL', password: 'other-password-123', role: 'admin' });
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual({ error: 'A user with this e-mail already exists' });

    expect((await post({ email: 'not-an-email', password: 'bob-password-123', client_ids: ['acme'] })).status).toBe(
      400,
    );
    expect((await post({ email: 'bob@example.test', password: 'short', client_ids: ['acme'] })).status).toBe(400);
    expect(
      (await post({ email: 'bob@example.test', password: 'bob-password-123', client_ids: ['acme'], role: 'owner' }))
        .status,
    ).toBe(400);
    expect(
      (await post({ email: 'bob@example.test', password: 'bob-password-123', client_ids: ['acme'], is_admin: true }))
        .status,
    ).toBe(400);

    const after = (await db.query('SELECT count(*)::int AS n FROM users')).rows[0].n;
    expect(after).toBe(before);
    const { rows } = await db.query(
      "SELECT count(*)::int AS n FROM audit_events WHERE data::text LIKE '%bob%' OR data::text LIKE '%other-password%'",
    );
    expect(rows[0].n).toBe(0);
  });

  it('answers 401 without a bearer token and 403 to a non-admin, on every method', async () => {
    const member = await createUser(portal);
    const memberToken = await login(portal.url, member.email, member.password);
    const calls: [string, string, unknown?][] = [
      ['GET', '/identity/admin/users'],
      ['POST', '/identity/admin/users', { email: 'x@example.test', password: 'x-password-1234', role: 'admin' }],
      ['PATCH', `/identity/admin/users?id=${member.id}`, { role: 'admin' }],
      ['DELETE', `/identity/admin/users?id=${member.id}`],
    ];
    for (const [method, path, json] of calls) {
      const forbidden = await http(portal.url, method, path, { headers: bearer(memberToken), json });
      expect({ method, status: forbidden.status, body: forbidden.body }).toEqual({
        method,
        status: 403,
        body: { error: 'Admin access required' },
      });
      const anonymous = await http(portal.url, method, path, { json });
      expect({ method, status: anonymous.status, body: anonymous.body }).toEqual({
        method,
        status: 401,
        body: { error: 'Unauthorized' },
      });
      expect(anonymous.headers.get('www-authenticate')).toBe(UNAUTHORIZED_BEARER);
      // The portal's header is not the identity provider's scheme.
      const viaHeader = await http(portal.url, method, path, { headers: withToken(await portal.adminToken()), json });
      expect(viaHeader.status).toBe(401);
    }
    expect(await userRow(db, member.id)).toMatchObject({ role: 'member' });
    expect(
      (await db.query("SELECT count(*)::int AS n FROM users WHERE email_normalized = 'x@example.test'")).rows[0].n,
    ).toBe(0);
  });

  it("PATCH password revokes the user's refresh tokens; the old password stops working and the new one works", async () => {
    const admin = await portal.adminToken();
    const user = await createUser(portal);
    const session1 = (await passwordGrant(portal, user.email, user.password)).body;
    const session2 = (await passwordGrant(portal, user.email, user.password)).body;
    expect(session1.refresh_token).toMatch(REFRESH_TOKEN_RE);
    const adminSession = (await passwordGrant(portal, ADMIN_EMAIL, ADMIN_PASSWORD)).body;

    clock.advance(5_000);
    const res = await http(portal.url, 'PATCH', `/identity/admin/users?id=${user.id}`, {
      headers: bearer(admin),
      json: { password: 'brand-new-password-1' },
    });
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({
      id: user.id,
      email: user.email,
      role: 'member',
      client_ids: ['acme'],
      updated_at: clock.date().toISOString(),
    });

    const { rows } = await db.query('SELECT revoked_at FROM refresh_tokens WHERE user_id = $1', [user.id]);
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row.revoked_at).toEqual(clock.date());
    for (const s of [session1, session2]) {
      const r = await refreshGrant(portal, s.refresh_token);
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ error: 'invalid_grant', error_description: 'Invalid or expired refresh token' });
    }
    // Another user's tokens are untouched.
    expect((await refreshGrant(portal, adminSession.refresh_token)).status).toBe(200);

    const old = await passwordGrant(portal, user.email, user.password);
    expect(old.status).toBe(400);
    expect(old.body.error).toBe('invalid_grant');
    const fresh = await passwordGrant(portal, user.email, 'brand-new-password-1');
    expect(fresh.status).toBe(200);
    expect((await userRow(db, user.id))?.password_hash).toMatch(/^\$argon2id\$/);

    const audit = await auditFor(user.id);
    expect(audit.map((e) => e.event_type)).toEqual(['user_created', 'user_updated']);
    expect(audit[1]).toMatchObject({
      actor: ADMIN_EMAIL,
      data: { user_id: user.id, email: user.email, changed: ['password'], role: 'member', client_ids: ['acme'] },
    });
    expect(audit[1]!.raw).not.toContain('brand-new-password-1');
    expect(audit[1]!.raw).not.toContain('argon2');
  });

  it('PATCH password also clears a lock', async () => {
    const admin = await portal.adminToken();
    const user = await createUser(portal);
    for (let i = 0; i < 5; i++) await passwordGrant(portal, user.email, 'wrong-password-000');
    expect((await passwordGrant(portal, user.email, user.password)).status).toBe(429);
    const res = await http(portal.url, 'PATCH', `/identity/admin/users?id=${user.id}`, {
      headers: bearer(admin),
      json: { password: 'unlocked-password-1' },
    });
    expect(res.status).toBe(200);
    expect(await failuresOf(db, user.email)).toEqual({ failed_logins: 0, locked_until: null });
    expect((await passwordGrant(portal, user.email, 'unlocked-password-1')).status).toBe(200);
  });

  it('PATCH role and client_ids take effect at once for /api calls made with an already issued token', async () => {
    const admin = await portal.adminToken();
    const license = await http(portal.url, 'POST', '/api/licenses', {
      headers: withToken(admin),
      json: { tier: 'msp', client_id: 'beta', name: 'Beta MSP' },
    });
    expect(license.status).toBe(201);
    const member = await createUser(portal, { client_ids: ['acme'] });
    const token = await login(portal.url, member.email, member.password);
    expect(decodeJwt(token)).toMatchObject({ role: 'member', client_ids: ['acme'] });

    const licenses = () => http(portal.url, 'GET', '/api/licenses', { headers: withToken(token) });
    const audit = () => http(portal.url, 'GET', '/api/audit', { headers: withToken(token) });

    expect((await licenses()).body).toEqual({ error: 'Admin access required' });
    expect((await licenses()).status).toBe(403);
    // acme has no license: professional tier, which lacks audit.
    const noAudit = await audit();
    expect(noAudit.status).toBe(403);
    expect(noAudit.body).toEqual({ error: 'Insufficient permissions for audit' });

    const scoped = await http(portal.url, 'PATCH', `/identity/admin/users?id=${member.id}`, {
      headers: bearer(admin),
      json: { client_ids: ['beta'] },
    });
    expect(scoped.status).toBe(200);
    expect(scoped.body.user).toMatchObject({ role: 'member', client_ids: ['beta'] });
    // The token still says acme; the portal reads beta (msp) from the users row.
    const betaAudit = await audit();
    expect(betaAudit.status).toBe(200);
    expect(betaAudit.body.total).toBe(1);
    expect(betaAudit.body.events).toHaveLength(1);
    expect(betaAudit.body.events[0]).toMatchObject({ event_type: 'license_created', client_id: 'beta' });
    expect((await licenses()).status).toBe(403);

    const promoted = await http(portal.url, 'PATCH', `/identity/admin/users?id=${member.id}`, {
      headers: bearer(admin),
      json: { role: 'admin' },
    });
    expect(promoted.status).toBe(200);
    expect(promoted.body.user).toMatchObject({ role: 'admin', client_ids: ['beta'] });
    const asAdmin = await licenses();
    expect(asAdmin.status).toBe(200);
    expect(asAdmin.body.licenses.map((l: { client_id: string }) => l.client_id)).toEqual(['beta']);
    // The identity provider reads the row too: the promoted user may now administer users.
    expect((await http(portal.url, 'GET', '/identity/admin/users', { headers: bearer(token) })).status).toBe(200);

    const demoted = await http(portal.url, 'PATCH', `/identity/admin/users?id=${member.id}`, {
      headers: bearer(admin),
      json: { role: 'member' },
    });
    expect(demoted.status).toBe(200);
    expect((await licenses()).status).toBe(403);
    expect((await http(portal.url, 'GET', '/identity/admin/users', { headers: bearer(token) })).status).toBe(403);

    const events = await auditFor(member.id);
    expect(events.map((e) => [e.event_type, e.data['changed']])).toEqual([
      ['user_created', undefined],
      ['user_updated', ['client_ids']],
      ['user_updated', ['role']],
      ['user_updated', ['role']],
    ]);
    for (const e of events) {
      expect(e.actor).toBe(ADMIN_EMAIL);
      expect(e.raw).not.toContain(member.password);
    }
  });

  it('PATCH refuses a member without client_ids, unknown fields, an empty body and an unknown id', async () => {
    const admin = await portal.adminToken();
    const user = await createUser(portal, { role: 'admin' });
    const patch = (id: string, json: unknown) =>
      http(portal.url, 'PATCH', `/identity/admin/users?id=${id}`, { headers: bearer(admin), json });
    const demoteWithout = await patch(user.id, { role: 'member' });
    expect(demoteWithout.status).toBe(400);
    expect(demoteWithout.body).toEqual({ error: 'A member needs at least one client id in client_ids' });
    expect((await patch(user.id, {})).status).toBe(400);
    expect((await patch(user.id, { email: 'new@example.test' })).status).toBe(400);
    expect((await patch(user.id, { password: 'short' })).status).toBe(400);
    const unknown = await patch('usr_0000000000000000', { role: 'admin' });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'User not found' });
    const missingId = await http(portal.url, 'PATCH', '/identity/admin/users', {
      headers: bearer(admin),
      json: { role: 'admin' },
    });
    expect(missingId.status).toBe(400);
    expect(await userRow(db, user.id)).toMatchObject({ role: 'admin', client_ids: [] });
    expect((await auditFor(user.id)).map((e) => e.event_type)).toEqual(['user_created']);
  });

  it('DELETE removes the user, its refresh tokens and the use of its tokens, and audits it', async () => {
    const admin = await portal.adminToken();
    const user = await createUser(portal, { role: 'admin' });
    const session = (await passwordGrant(portal, user.email, user.password)).body;
    expect((await http(portal.url, 'GET', '/identity/user', { headers: bearer(session.access_token) })).status).toBe(
      200,
    );
    expect((await http(portal.url, 'GET', '/api/licenses', { headers: withToken(session.access_token) })).status).toBe(
      200,
    );

    const res = await http(portal.url, 'DELETE', `/identity/admin/users?id=${user.id}`, { headers: bearer(admin) });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expect(await userRow(db, user.id)).toBeUndefined();
    expect(
      (await db.query('SELECT count(*)::int AS n FROM refresh_tokens WHERE user_id = $1', [user.id])).rows[0].n,
    ).toBe(0);

    const me = await http(portal.url, 'GET', '/identity/user', { headers: bearer(session.access_token) });
    expect(me.status).toBe(401);
    expect(me.body).toEqual({ error: 'Unauthorized' });
    expect(me.headers.get('www-authenticate')).toBe(UNAUTHORIZED_BEARER);
    const api = await http(portal.url, 'GET', '/api/licenses', { headers: withToken(session.access_token) });
    expect(api.status).toBe(401);
    expect(api.body).toEqual({ error: 'Unauthorized' });
    expect((await refreshGrant(portal, session.refresh_token)).status).toBe(400);
    expect((await passwordGrant(portal, user.email, user.password)).status).toBe(400);

    const again = await http(portal.url, 'DELETE', `/identity/admin/users?id=${user.id}`, { headers: bearer(admin) });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ error: 'User not found' });

    const events = await auditFor(user.id);
    expect(events.map((e) => e.event_type)).toEqual(['user_created', 'user_deleted']);
    expect(events[1]).toMatchObject({ actor: ADMIN_EMAIL, data: { user_id: user.id, email: user.email } });
    expect(events[1]!.raw).not.toContain(user.password);
  });
});

describe('/identity/admin/users: the last admin', () => {
  let portal: TestPortal;
  let db: pg.Pool;
  beforeAll(async () => {
    portal = await startTestPortal();
    db = openDb(portal);
  });
  afterAll(async () => {
    await db.end();
    await portal.close();
  });

  it('cannot be demoted or deleted; another admin can be', async () => {
    const admin = await portal.adminToken();
    const id = await adminId(db);
    const demote = await http(portal.url, 'PATCH', `/identity/admin/users?id=${id}`, {
      headers: bearer(admin),
      json: { role: 'member', client_ids: ['acme'] },
    });
    expect(demote.status).toBe(409);
    expect(demote.body).toEqual({ error: 'Cannot demote the last admin' });
    const del = await http(portal.url, 'DELETE', `/identity/admin/users?id=${id}`, { headers: bearer(admin) });
    expect(del.status).toBe(409);
    expect(del.body).toEqual({ error: 'Cannot delete the last admin' });
    // A change that keeps the role is fine for the last admin.
    expect(
      (
        await http(portal.url, 'PATCH', `/identity/admin/users?id=${id}`, {
          headers: bearer(admin),
          json: { client_ids: ['acme'] },
        })
      ).status,
    ).toBe(200);

    const second = await createUser(portal, { role: 'admin' });
    const demoteSecond = await http(portal.url, 'PATCH', `/identity/admin/users?id=${second.id}`, {
      headers: bearer(admin),
      json: { role: 'member', client_ids: ['acme'] },
    });
    expect(demoteSecond.status).toBe(200);
    expect(demoteSecond.body.user).toMatchObject({ role: 'member', client_ids: ['acme'] });

    const third = await createUser(portal, { role: 'admin' });
    const thirdToken = await login(portal.url, third.email, third.password);
    // The third admin removes the bootstrap admin, then is the last one itself.
    expect(
      (await http(portal.url, 'DELETE', `/identity/admin/users?id=${id}`, { headers: bearer(thirdToken) })).status,
    ).toBe(200);
    expect((await http(portal.url, 'GET', '/identity/user', { headers: bearer(admin) })).status).toBe(401);
    const selfDelete = await http(portal.url, 'DELETE', `/identity/admin/users?id=${third.id}`, {
      headers: bearer(thirdToken),
    });
    expect(selfDelete.status).toBe(409);
    expect(selfDelete.body).toEqual({ error: 'Cannot delete the last admin' });
    const selfDemote = await http(portal.url, 'PATCH', `/identity/admin/users?id=${third.id}`, {
      headers: bearer(thirdToken),
      json: { role: 'member', client_ids: ['acme'] },
    });
    expect(selfDemote.status).toBe(409);
    const { rows } = await db.query("SELECT count(*)::int AS n FROM users WHERE role = 'admin'");
    expect(rows[0].n).toBe(1);
  });
});

describe('/identity/admin/users: concurrent demotions', () => {
  let portal: TestPortal;
  let db: pg.Pool;
  beforeAll(async () => {
    portal = await startTestPortal();
    db = openDb(portal);
  });
  afterAll(async () => {
    await db.end();
    await portal.close();
  });

  it('keeps one admin when two admins demote each other at the same time', async () => {
    const admin = await portal.adminToken();
    const id = await adminId(db);
    const other = await createUser(portal, { role: 'admin' });
    const otherToken = await login(portal.url, other.email, other.password);
    // Hold the admin rows so both requests get past their auth check and queue on the lock,
    // then let them go: the outcome must not depend on which one the database serves first.
    const holder = await db.connect();
    let pending: Promise<HttpResult[]>;
    try {
      await holder.query('BEGIN');
      await holder.query("SELECT id FROM users WHERE role = 'admin' FOR UPDATE");
      pending = Promise.all([
        http(portal.url, 'PATCH', `/identity/admin/users?id=${id}`, {
          headers: bearer(otherToken),
          json: { role: 'member', client_ids: ['acme'] },
        }),
        http(portal.url, 'PATCH', `/identity/admin/users?id=${other.id}`, {
          headers: bearer(admin),
          json: { role: 'member', client_ids: ['acme'] },
        }),
      ]);
      await lockWaiters(db, 2);
    } finally {
      await holder.query('COMMIT');
      holder.release();
    }
    const [a, b] = await pending;
    expect([a!.status, b!.status].sort()).toEqual([200, 409]);
    expect([a!.body, b!.body].find((x) => x.error)).toEqual({ error: 'Cannot demote the last admin' });
    const { rows } = await db.query("SELECT count(*)::int AS n FROM users WHERE role = 'admin'");
    expect(rows[0].n).toBe(1);
  });
});

describe('bootstrap admin from SVC_ADMIN_EMAIL / SVC_ADMIN_PASSWORD', () => {
  let portal: TestPortal;
  let db: pg.Pool;
  beforeAll(async () => {
    portal = await startTestPortal();
    db = openDb(portal);
  });
  afterAll(async () => {
    await db.end();
    await portal.close();
  });

  it('creates the admin once, and a restart with another password does not reset it', async () => {
    const { rows: first } = await db.query('SELECT id, email, role, client_ids, password_hash FROM users');
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ email: ADMIN_EMAIL, role: 'admin', client_ids: [] });
    expect(first[0].password_hash).toMatch(/^\$argon2id\$/);
    const created = await db.query("SELECT actor, data FROM audit_events WHERE event_type = 'user_created'");
    expect(created.rows).toEqual([
      { actor: 'bootstrap', data: { user_id: first[0].id, email: ADMIN_EMAIL, role: 'admin' } },
    ]);
    const token = await portal.adminToken();

    const restarted = await startTestPortal({
      databaseUrl: portal.databaseUrl,
      env: { SVC_ADMIN_PASSWORD: 'a-different-password-456' },
    });
    try {
      const newPassword = await passwordGrant(restarted, ADMIN_EMAIL, 'a-different-password-456');
      expect(newPassword.status).toBe(400);
      expect(newPassword.body).toEqual({ error: 'invalid_grant', error_description: 'Invalid username or password' });
      const oldPassword = await passwordGrant(restarted, ADMIN_EMAIL, ADMIN_PASSWORD);
      expect(oldPassword.status).toBe(200);
      // Same signing key across restarts and replicas: the first portal's token works on the second.
      expect((await http(restarted.url, 'GET', '/identity/user', { headers: bearer(token) })).status).toBe(200);
      expect((await http(restarted.url, 'GET', '/identity/.well-known/jwks.json')).body).toEqual(
        (await http(portal.url, 'GET', '/identity/.well-known/jwks.json')).body,
      );
    } finally {
      await restarted.close();
    }

    // The e-mail in another case is the same account.
    const third = await startTestPortal({
      databaseUrl: portal.databaseUrl,
      env: { SVC_ADMIN_EMAIL: 'ADMIN@Test.Local', SVC_ADMIN_PASSWORD: 'yet-another-password-789' },
    });
    await third.close();

    const { rows: after } = await db.query('SELECT id, email, role, client_ids, password_hash FROM users');
    expect(after).toEqual(first);
    expect(
      (await db.query("SELECT count(*)::int AS n FROM audit_events WHERE event_type = 'user_created'")).rows[0].n,
    ).toBe(1);
    expect((await db.query('SELECT count(*)::int AS n FROM identity_signing_keys')).rows[0].n).toBe(1);
  });

  it('creates no account when the variables are unset', async () => {
    const bare = await startTestPortal({ env: { SVC_ADMIN_EMAIL: undefined, SVC_ADMIN_PASSWORD: undefined } });
    const bareDb = openDb(bare);
    try {
      expect((await bareDb.query('SELECT count(*)::int AS n FROM users')).rows[0].n).toBe(0);
      expect((await passwordGrant(bare, ADMIN_EMAIL, ADMIN_PASSWORD)).status).toBe(400);
    } finally {
      await bareDb.end();
      await bare.close();
    }
  });
});

/** Waits until `n` backends of this database wait on a lock (or `done` settles first). */
async function lockWaiters(db: pg.Pool, n: number, done?: Promise<unknown>): Promise<void> {
  let settled = false;
  void done?.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let i = 0; ; i++) {
    const { rows } = await db.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
    );
    if (rows[0].n >= n || settled) return;
    if (i > 1000) throw new Error(`never saw ${n} lock waiters`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('concurrent logins and refreshes', () => {
  const clock = fakeClock();
  let portal: TestPortal;
  let db: pg.Pool;
  beforeAll(async () => {
    portal = await startTestPortal({ now: clock.now });
    db = openDb(portal);
  });
  afterAll(async () => {
    await db.end();
    await portal.close();
  });

  it('lets no more than 5 guesses through when they arrive in parallel', async () => {
    const user = await createUser(portal);
    const results = await Promise.all(
      Array.from({ length: 12 }, () => passwordGrant(portal, user.email, 'wrong-password-000')),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([400, 400, 400, 400, 400, 429, 429, 429, 429, 429, 429, 429]);
    for (const r of results.filter((x) => x.status === 429)) {
      expect(r.body).toEqual({
        error: 'too_many_attempts',
        error_description: 'Too many failed logins; try again later',
      });
      expect(r.headers.get('retry-after')).toBe('30');
    }
    expect(await failuresOf(db, user.email)).toEqual({
      failed_logins: 5,
      locked_until: new Date(clock.date().getTime() + 30_000),
    });
    expect((await passwordGrant(portal, user.email, user.password)).status).toBe(429);
  });

  it('revokes the token a concurrent refresh is issuing when the same refresh token is replayed meanwhile', async () => {
    const user = await createUser(portal);
    const session = (await passwordGrant(portal, user.email, user.password)).body;
    // Stall the first refresh: while the test holds the user's row, the new refresh token
    // cannot be written (its foreign key needs that row).
    const holder = await db.connect();
    let first: Promise<HttpResult>;
    let replay: Promise<HttpResult>;
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM users WHERE id = $1 FOR UPDATE', [user.id]);
      first = refreshGrant(portal, session.refresh_token);
      await lockWaiters(db, 1);
      replay = refreshGrant(portal, session.refresh_token);
      // The replay either completes on its own or queues behind the first refresh.
      await lockWaiters(db, 2, replay);
    } finally {
      await holder.query('COMMIT');
      holder.release();
    }
    // Either request may be the one that rotates; the other is a replay.
    const results = await Promise.all([first, replay]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
    const winner = results.find((r) => r.status === 200)!;
    const loser = results.find((r) => r.status === 400)!;
    expect(loser.body).toEqual({ error: 'invalid_grant', error_description: 'Invalid or expired refresh token' });
    expect(winner.body.refresh_token).toMatch(REFRESH_TOKEN_RE);
    // Reuse detected: the whole family is revoked, including what the winning refresh issued.
    const next = await refreshGrant(portal, winner.body.refresh_token);
    expect(next.status).toBe(400);
    const { rows } = await db.query(
      'SELECT count(*)::int AS n FROM refresh_tokens WHERE user_id = $1 AND revoked_at IS NULL',
      [user.id],
    );
    expect(rows[0].n).toBe(0);
  });

  it('leaves no live refresh token when a refresh races with a password change', async () => {
    const admin = await portal.adminToken();
    const user = await createUser(portal);
    const session = (await passwordGrant(portal, user.email, user.password)).body;
    const holder = await db.connect();
    let refresh: Promise<HttpResult>;
    let change: Promise<HttpResult>;
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM users WHERE id = $1 FOR UPDATE', [user.id]);
      refresh = refreshGrant(portal, session.refresh_token);
      await lockWaiters(db, 1);
      change = http(portal.url, 'PATCH', `/identity/admin/users?id=${user.id}`, {
        headers: bearer(admin),
        json: { password: 'changed-password-123' },
      });
      await lockWaiters(db, 2, change);
    } finally {
      await holder.query('COMMIT');
      holder.release();
    }
    const [r, c] = await Promise.all([refresh, change]);
    expect(c.status).toBe(200);
    expect([200, 400]).toContain(r.status);
    if (r.status === 200) expect((await refreshGrant(portal, r.body.refresh_token)).status).toBe(400);
    const { rows } = await db.query(
      'SELECT count(*)::int AS n FROM refresh_tokens WHERE user_id = $1 AND revoked_at IS NULL',
      [user.id],
    );
    expect(rows[0].n).toBe(0);
  });
});
