import { randomBytes } from 'node:crypto';
import { decodeJwt, SignJWT } from 'jose';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, type HttpResult } from '@svc/test-support/http';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';

/**
 * Sign-out (RFC 7009 revocation), "sign out everywhere", and the claims an access
 * token of the portal's own provider must carry (docs/identity.md#limits-and-hardening).
 */

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

let portal: TestPortal;
let db: pg.Pool;

beforeAll(async () => {
  portal = await startTestPortal();
  db = new pg.Pool({ connectionString: portal.databaseUrl, max: 2 });
  db.on('error', () => {});
});
afterAll(async () => {
  await db?.end();
  await portal?.close();
});

async function createUser(role: 'admin' | 'member' = 'member') {
  const email = `user-${randomBytes(4).toString('hex')}@example.test`;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const res = await http(portal.url, 'POST', '/identity/admin/users', {
    headers: bearer(await portal.adminToken()),
    json: { email, password, role, client_ids: role === 'member' ? ['acme'] : [] },
  });
  if (res.status !== 201) throw new Error(`create user failed: ${res.status} ${res.text}`);
  return { id: res.body.user.id as string, email, password };
}

async function login(user: { email: string; password: string }) {
  const res = await http(portal.url, 'POST', '/identity/token', {
    form: { grant_type: 'password', username: user.email, password: user.password },
  });
  expect(res.status).toBe(200);
  return res.body as { access_token: string; refresh_token: string };
}

const refresh = (refreshToken: string) =>
  http(portal.url, 'POST', '/identity/token', { form: { grant_type: 'refresh_token', refresh_token: refreshToken } });
const revoke = (form: Record<string, string>, headers: Record<string, string> = {}) =>
  http(portal.url, 'POST', '/identity/revoke', { form, headers });
const whoAmI = async (token: string) =>
  (await http(portal.url, 'GET', '/identity/user', { headers: bearer(token) })).status;
const apiStatus = async (token: string) =>
  (await http(portal.url, 'GET', '/api/sessions', { headers: { 'x-identity-token': token } })).status;
const invalidGrant = { error: 'invalid_grant', error_description: 'Invalid or expired refresh token' };

function expectRefused(res: HttpResult) {
  expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: invalidGrant });
}

async function familiesOf(userId: string) {
  const { rows } = await db.query(
    'SELECT id, revoked_at IS NOT NULL AS revoked FROM token_families WHERE user_id = $1 ORDER BY started_at, id',
    [userId],
  );
  return rows as { id: string; revoked: boolean }[];
}

describe('POST /identity/revoke (RFC 7009)', () => {
  it('a refresh token ends its family: a copy taken before sign-out no longer refreshes and its access token gets 401; another login keeps working', async () => {
    const user = await createUser();
    const session = await login(user);
    const other = await login(user);
    // The refresh token was rotated once before sign-out: the console holds the newest one.
    const rotated = await refresh(session.refresh_token);
    expect(rotated.status).toBe(200);
    const copied = rotated.body.refresh_token as string;
    const access = rotated.body.access_token as string;
    expect(await whoAmI(access)).toBe(200);

    const res = await revoke({ token: copied, token_type_hint: 'refresh_token' });
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { ok: true } });
    expect(res.headers.get('cache-control')).toBe('no-store');

    expectRefused(await refresh(copied));
    expect(await whoAmI(access)).toBe(401);
    expect(await apiStatus(access)).toBe(401);
    expect(await whoAmI(other.access_token)).toBe(200);
    expect((await refresh(other.refresh_token)).status).toBe(200);
    const families = await familiesOf(user.id);
    expect(families.map((f) => f.revoked).sort()).toEqual([false, true]);
    const { rows } = await db.query(
      'SELECT count(*)::int AS n FROM refresh_tokens WHERE family_id = $1 AND revoked_at IS NULL',
      [decodeJwt(access)['sid']],
    );
    expect(rows[0].n).toBe(0);
  });

  it("an access token ends its sid's family, refresh token included; with either hint or none", async () => {
    const user = await createUser();
    for (const hint of ['access_token', 'refresh_token', undefined]) {
      const session = await login(user);
      const res = await revoke({ token: session.access_token, ...(hint ? { token_type_hint: hint } : {}) });
      expect({ status: res.status, body: res.body }, String(hint)).toEqual({ status: 200, body: { ok: true } });
      expect(await whoAmI(session.access_token)).toBe(401);
      expectRefused(await refresh(session.refresh_token));
    }
    expect((await familiesOf(user.id)).every((f) => f.revoked)).toBe(true);
  });

  it('answers 200 for unknown, malformed, expired-looking and already revoked tokens, and revokes nothing else', async () => {
    const user = await createUser();
    const session = await login(user);
    for (const token of ['nope', 'a.b.c', randomBytes(32).toString('base64url'), 'x'.repeat(4000)]) {
      const res = await revoke({ token });
      expect({ status: res.status, body: res.body }, token.slice(0, 20)).toEqual({ status: 200, body: { ok: true } });
    }
    expect((await revoke({ token: 'nope', token_type_hint: 'something_else' })).status).toBe(200);
    expect(await whoAmI(session.access_token)).toBe(200);
    expect((await familiesOf(user.id)).map((f) => f.revoked)).toEqual([false]);
    await revoke({ token: session.refresh_token });
    expect((await revoke({ token: session.refresh_token })).status).toBe(200);
    expect((await revoke({ token: session.access_token })).status).toBe(200);
  });

  it('a request without token is an OAuth invalid_request; a cross-site browser post is refused', async () => {
    const missing = await revoke({ token_type_hint: 'refresh_token' });
    expect({ status: missing.status, body: missing.body }).toEqual({
      status: 400,
      body: { error: 'invalid_request', error_description: 'token is required' },
    });
    const user = await createUser();
    const session = await login(user);
    const cross = await revoke({ token: session.refresh_token }, { origin: 'https://evil.example' });
    expect({ status: cross.status, body: cross.body }).toEqual({
      status: 403,
      body: { error: 'invalid_request', error_description: 'cross-site request refused' },
    });
    expect((await refresh(session.refresh_token)).status).toBe(200);
  });
});

describe('sign out everywhere', () => {
  it('POST /identity/user/sessions/revoke ends every family of the caller, not of other users, and is audited', async () => {
    const user = await createUser();
    const bystander = await createUser();
    const a = await login(user);
    const b = await login(user);
    const kept = await login(bystander);
    const res = await http(portal.url, 'POST', '/identity/user/sessions/revoke', { headers: bearer(a.access_token) });
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { ok: true, revoked_sessions: 2 } });
    for (const s of [a, b]) {
      expect(await whoAmI(s.access_token)).toBe(401);
      expectRefused(await refresh(s.refresh_token));
    }
    expect(await whoAmI(kept.access_token)).toBe(200);
    const { rows } = await db.query(
      `SELECT actor, data FROM audit_events WHERE event_type = 'user_sessions_revoked' AND data->>'user_id' = $1`,
      [user.id],
    );
    expect(rows).toEqual([{ actor: user.email, data: { user_id: user.id, email: user.email, sessions: 2 } }]);
    // A new login after it works.
    expect(await whoAmI((await login(user)).access_token)).toBe(200);
  });

  it('needs a valid bearer token', async () => {
    const res = await http(portal.url, 'POST', '/identity/user/sessions/revoke');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="svc-identity"');
  });

  it("an admin ends another user's sessions with POST /identity/admin/users/sessions/revoke?id=; a member may not; unknown ids are 404", async () => {
    const user = await createUser();
    const s = await login(user);
    const member = await createUser();
    const m = await login(member);
    const forbidden = await http(portal.url, 'POST', `/identity/admin/users/sessions/revoke?id=${user.id}`, {
      headers: bearer(m.access_token),
    });
    expect(forbidden.status).toBe(403);
    expect(await whoAmI(s.access_token)).toBe(200);

    const admin = await portal.adminToken();
    const res = await http(portal.url, 'POST', `/identity/admin/users/sessions/revoke?id=${user.id}`, {
      headers: bearer(admin),
    });
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { ok: true, revoked_sessions: 1 } });
    expect(await whoAmI(s.access_token)).toBe(401);
    expectRefused(await refresh(s.refresh_token));
    expect(await whoAmI(admin)).toBe(200);
    const { rows } = await db.query(
      `SELECT actor, data FROM audit_events WHERE event_type = 'user_sessions_revoked' AND data->>'user_id' = $1`,
      [user.id],
    );
    expect(rows).toEqual([{ actor: 'admin@test.local', data: { user_id: user.id, email: user.email, sessions: 1 } }]);

    const missing = await http(portal.url, 'POST', '/identity/admin/users/sessions/revoke?id=usr_0000000000000000', {
      headers: bearer(admin),
    });
    expect({ status: missing.status, body: missing.body }).toEqual({
      status: 404,
      body: { error: 'User not found' },
    });
  });
});

describe('the claims a validly signed access token must carry', () => {
  let sub: string;
  let sid: string;
  let sign: (claims: Record<string, unknown>, iat: number | null, exp: number) => Promise<string>;
  const nowS = () => Math.floor(Date.now() / 1000);

  beforeAll(async () => {
    const claims = decodeJwt(await portal.adminToken());
    sub = claims.sub!;
    sid = claims['sid'] as string;
    const key = portal.ctx.signingKey!;
    sign = (extra, iat, exp) => {
      const jwt = new SignJWT({ email: 'admin@test.local', role: 'admin', client_ids: [], ...extra })
        .setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ: 'JWT' })
        .setSubject(sub)
        .setIssuer('http://portal.test/identity')
        .setAudience('svc-portal')
        .setExpirationTime(exp);
      if (iat !== null) jwt.setIssuedAt(iat);
      return jwt.sign(key.privateKey);
    };
  });

  const both = async (token: string) => [await whoAmI(token), await apiStatus(token)];

  it('the baseline: sid of a live family, iat now, a one-hour lifetime', async () => {
    expect(await both(await sign({ sid }, nowS(), nowS() + 3600))).toEqual([200, 200]);
    // A small clock skew between replicas is allowed.
    expect(await both(await sign({ sid }, nowS() + 30, nowS() + 30 + 3600))).toEqual([200, 200]);
  });

  it('refuses a token without sid', async () => {
    expect(await both(await sign({}, nowS(), nowS() + 600))).toEqual([401, 401]);
  });

  it('refuses a token without iat', async () => {
    expect(await both(await sign({ sid }, null, nowS() + 600))).toEqual([401, 401]);
  });

  it('refuses an iat in the future beyond the skew', async () => {
    expect(await both(await sign({ sid }, nowS() + 3600, nowS() + 3600 + 600))).toEqual([401, 401]);
    expect(await both(await sign({ sid }, nowS() + 120, nowS() + 600))).toEqual([401, 401]);
  });

  it('refuses exp - iat beyond the access-token lifetime (a 10-year token, and one second over)', async () => {
    expect(await both(await sign({ sid }, nowS(), nowS() + 10 * 365 * 86_400))).toEqual([401, 401]);
    expect(await both(await sign({ sid }, nowS() - 10, nowS() - 10 + 3601))).toEqual([401, 401]);
  });
});
