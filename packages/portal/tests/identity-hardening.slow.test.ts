import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { Agent, fetch as undiciFetch } from 'undici';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../src/db/migrate.ts';
import { openDatabase } from '../src/db/pool.ts';
import { ConfigError, loadConfig } from '../src/config/index.ts';
import { checkBootstrapPassword } from '../src/identity/bootstrap.ts';
import { http, type HttpResult } from '@svc/test-support/http';
import { createTestDatabase, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { killAll, makeDataDir, spawnPortal, waitForExit } from '@svc/test-support/portal-process';
import { migrateBefore } from './helpers/migrate-before.ts';

/** Hardening of the portal's own identity provider (docs/identity.md#limits-and-hardening). */

function fakeClock() {
  let t = Math.floor(Date.now() / 1000) * 1000;
  return {
    now: () => new Date(t),
    advance(ms: number) {
      t += ms;
    },
  };
}

function tokenRequest(
  portal: TestPortal,
  form: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  return http(portal.url, 'POST', '/identity/token', { form, headers });
}

const passwordGrant = (portal: TestPortal, username: string, password: string, headers: Record<string, string> = {}) =>
  tokenRequest(portal, { grant_type: 'password', username, password }, headers);
const refreshGrant = (portal: TestPortal, refreshToken: string) =>
  tokenRequest(portal, { grant_type: 'refresh_token', refresh_token: refreshToken });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

function openDb(portal: TestPortal): pg.Pool {
  const pool = new pg.Pool({ connectionString: portal.databaseUrl, max: 3 });
  pool.on('error', () => {});
  return pool;
}

async function createUser(portal: TestPortal): Promise<{ id: string; email: string; password: string }> {
  const email = `user-${randomBytes(4).toString('hex')}@example.test`;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const res = await http(portal.url, 'POST', '/identity/admin/users', {
    headers: bearer(await portal.adminToken()),
    json: { email, password, role: 'member', client_ids: ['acme'] },
  });
  if (res.status !== 201) throw new Error(`create user failed: ${res.status} ${res.text}`);
  return { id: res.body.user.id, email, password };
}

describe('password strength (zxcvbn)', () => {
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

  it('refuses a weak password on create with 400 and the reason, and stores no user', async () => {
    const res = await http(portal.url, 'POST', '/identity/admin/users', {
      headers: bearer(await portal.adminToken()),
      json: { email: 'weak@example.test', password: 'aaaaaaaaaaaa', role: 'member', client_ids: ['acme'] },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(
      /^Password is too weak \(strength 0 of 4, at least 3 required\): Repeated characters like "aaa" are easy to guess\./,
    );
    expect(res.body.error).not.toContain('aaaaaaaaaaaa');
    const { rows } = await db.query(
      `SELECT count(*)::int AS n FROM users WHERE email_normalized = 'weak@example.test'`,
    );
    expect(rows[0].n).toBe(0);
  });

  it('refuses a password made of the e-mail address', async () => {
    const res = await http(portal.url, 'POST', '/identity/admin/users', {
      headers: bearer(await portal.adminToken()),
      json: { email: 'qzxvbelmontrix@example.test', password: 'Qzxvbelmontrix7', role: 'member', client_ids: ['acme'] },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^Password is too weak/);
  });

  it("refuses season/year patterns and the e-mail's parts with a year, on create and update; a strong password passes", async () => {
    const admin = await portal.adminToken();
    const email = `jane.doe.${randomBytes(3).toString('hex')}@acme-corp.example`;
    const local = email.split('@')[0]!;
    const dated =
      'Password is too weak: a season, month or year with the product name, the e-mail address or the portal host around it is easy to guess.';
    for (const password of [
      'Winter2026!!!',
      'svc-portal-2026',
      `${local}2026`,
      'acme-corp-2026',
      'portal.test-2026!',
    ]) {
      const res = await http(portal.url, 'POST', '/identity/admin/users', {
        headers: bearer(admin),
        json: { email, password, role: 'member', client_ids: ['acme'] },
      });
      expect({ status: res.status, body: res.body }, password).toEqual({ status: 400, body: { error: dated } });
    }
    expect(
      (await db.query('SELECT count(*)::int AS n FROM users WHERE email_normalized = $1', [email])).rows[0].n,
    ).toBe(0);
    const created = await http(portal.url, 'POST', '/identity/admin/users', {
      headers: bearer(admin),
      json: { email, password: 'Winter-orbit-lantern-quarry-2026', role: 'member', client_ids: ['acme'] },
    });
    expect(created.status, created.text).toBe(201);
    const update = await http(portal.url, 'PATCH', `/identity/admin/users?id=${created.body.user.id}`, {
      headers: bearer(admin),
      json: { password: `${local}2026` },
    });
    expect({ status: update.status, body: update.body }).toEqual({ status: 400, body: { error: dated } });
    expect((await passwordGrant(portal, email, 'Winter-orbit-lantern-quarry-2026')).status).toBe(200);
  });

  it('refuses SVC_ADMIN_PASSWORD=Winter2026!!! and one made of the portal host and a year', () => {
    for (const password of ['Winter2026!!!', 'scans.example.org-2026']) {
      let err: unknown;
      try {
        checkBootstrapPassword(
          loadConfig(
            {
              SVC_ADMIN_EMAIL: 'root@example.com',
              SVC_ADMIN_PASSWORD: password,
              SVC_BASE_URL: 'https://scans.example.org',
            },
            '/srv/portal',
          ),
        );
      } catch (e) {
        err = e;
      }
      expect(err, password).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).message).toBe(
        'Invalid configuration: SVC_ADMIN_PASSWORD is too weak: a season, month or year with the product name, the e-mail address or the portal host around it is easy to guess.',
      );
    }
  });

  it('refuses a weak new password on update and keeps the old one', async () => {
    const user = await createUser(portal);
    const before = (await db.query('SELECT password_hash FROM users WHERE id = $1', [user.id])).rows[0].password_hash;
    const res = await http(portal.url, 'PATCH', `/identity/admin/users?id=${user.id}`, {
      headers: bearer(await portal.adminToken()),
      json: { password: 'password1234' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^Password is too weak \(strength \d of 4, at least 3 required\)/);
    expect((await db.query('SELECT password_hash FROM users WHERE id = $1', [user.id])).rows[0].password_hash).toBe(
      before,
    );
    expect((await passwordGrant(portal, user.email, user.password)).status).toBe(200);
  });

  it('refuses a weak SVC_ADMIN_PASSWORD at start with a message naming the variable, not the password', async () => {
    const err: unknown = await startTestPortal({ env: { SVC_ADMIN_PASSWORD: 'aaaaaaaaaaaa' } }).then(
      async (started) => {
        await started.close();
        return null;
      },
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).variable).toBe('SVC_ADMIN_PASSWORD');
    expect((err as ConfigError).message).toMatch(
      /^Invalid configuration: SVC_ADMIN_PASSWORD is too weak \(strength 0 of 4, at least 3 required\)/,
    );
    expect((err as ConfigError).message).not.toContain('aaaaaaaaaaaa');
    expect((err as ConfigError).message).not.toContain('\n');
  });

  it('leaves SVC_ADMIN_PASSWORD unchecked with an external identity provider, which ignores it', async () => {
    const external = await startTestPortal({
      env: {
        SVC_ADMIN_PASSWORD: 'aaaaaaaaaaaa',
        SVC_JWT_JWKS_URL: 'https://idp.example.org/jwks.json',
        SVC_JWT_ISSUER: 'https://idp.example.org/',
        SVC_JWT_AUDIENCE: 'svc-portal',
      },
    });
    try {
      expect(external.ctx.config.externalJwt).not.toBeNull();
      expect((await http(external.url, 'GET', '/api/health')).status).toBe(200);
    } finally {
      await external.close();
    }
  });
});

describe('token revocation and the refresh-token family lifetime', () => {
  const clock = fakeClock();
  let portal: TestPortal;
  let db: pg.Pool;
  beforeAll(async () => {
    portal = await startTestPortal({ now: clock.now, env: { SVC_REFRESH_FAMILY_MAX_DAYS: '2' } });
    db = openDb(portal);
  });
  afterAll(async () => {
    await db.end();
    await portal.close();
  });

  async function loginAs(user: { email: string; password: string }) {
    const res = await passwordGrant(portal, user.email, user.password);
    expect(res.status).toBe(200);
    return res.body as { access_token: string; refresh_token: string };
  }
  const whoAmI = async (token: string) =>
    (await http(portal.url, 'GET', '/identity/user', { headers: bearer(token) })).status;
  const apiStatus = async (token: string) =>
    (await http(portal.url, 'GET', '/api/sessions', { headers: { 'x-identity-token': token } })).status;

  it('ends the access tokens issued before a password change at once; a login after it works', async () => {
    const user = await createUser(portal);
    const before = await loginAs(user);
    expect(await whoAmI(before.access_token)).toBe(200);
    expect(await apiStatus(before.access_token)).toBe(200);
    const changed = await http(portal.url, 'PATCH', `/identity/admin/users?id=${user.id}`, {
      headers: bearer(await portal.adminToken()),
      json: { password: 'a-brand-new-passphrase-77' },
    });
    expect(changed.status).toBe(200);
    expect(await whoAmI(before.access_token)).toBe(401);
    expect(await apiStatus(before.access_token)).toBe(401);
    const after = await loginAs({ email: user.email, password: 'a-brand-new-passphrase-77' });
    expect(await whoAmI(after.access_token)).toBe(200);
    const { rows } = await db.query('SELECT tokens_valid_after FROM users WHERE id = $1', [user.id]);
    expect(rows[0].tokens_valid_after).toEqual(clock.now());
  });

  it('ends every access token of a family when a rotated refresh token is reused; another family keeps working', async () => {
    const user = await createUser(portal);
    const first = await loginAs(user);
    const other = await loginAs(user);
    const second = await refreshGrant(portal, first.refresh_token);
    expect(second.status).toBe(200);
    expect(await whoAmI(second.body.access_token)).toBe(200);
    const reuse = await refreshGrant(portal, first.refresh_token);
    expect(reuse.status).toBe(400);
    expect(reuse.body).toEqual({ error: 'invalid_grant', error_description: 'Invalid or expired refresh token' });
    expect(await whoAmI(first.access_token)).toBe(401);
    expect(await whoAmI(second.body.access_token)).toBe(401);
    expect(await apiStatus(second.body.access_token)).toBe(401);
    expect(await whoAmI(other.access_token)).toBe(200);
    const { rows } = await db.query(
      'SELECT count(*)::int AS n FROM token_families WHERE user_id = $1 AND revoked_at IS NOT NULL',
      [user.id],
    );
    expect(rows[0].n).toBe(1);
  });

  it('refuses a refresh once the family is SVC_REFRESH_FAMILY_MAX_DAYS old, however recently it rotated', async () => {
    const user = await createUser(portal);
    let tokens = await loginAs(user);
    clock.advance(86_400_000);
    const day1 = await refreshGrant(portal, tokens.refresh_token);
    expect(day1.status).toBe(200);
    tokens = day1.body;
    clock.advance(86_400_000 - 1000);
    const justBefore = await refreshGrant(portal, tokens.refresh_token);
    expect(justBefore.status).toBe(200);
    tokens = justBefore.body;
    clock.advance(1000);
    const atLimit = await refreshGrant(portal, tokens.refresh_token);
    expect(atLimit.status).toBe(400);
    expect(atLimit.body).toEqual({ error: 'invalid_grant', error_description: 'Invalid or expired refresh token' });
    // A new login starts a new family.
    expect(await whoAmI((await loginAs(user)).access_token)).toBe(200);
  });
});

/** A password grant sent from another loopback address (a real socket bound to `from`). */
async function passwordGrantFrom(
  portal: TestPortal,
  from: string,
  username: string,
  password: string,
): Promise<{ status: number; body: any }> {
  const dispatcher = new Agent({ localAddress: from });
  try {
    const res = await undiciFetch(`${portal.url}/identity/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'password', username, password }),
      dispatcher,
    });
    return { status: res.status, body: await res.json() };
  } finally {
    await dispatcher.close();
  }
}

describe('failed logins lock per (e-mail, address) and only slow down across addresses', () => {
  const clock = fakeClock();
  let portal: TestPortal;
  let db: pg.Pool;
  beforeAll(async () => {
    portal = await startTestPortal({
      now: clock.now,
      env: { SVC_LOGIN_SLOW_AFTER: '8', SVC_LOGIN_SLOW_DELAY_MS: '1500' },
    });
    db = openDb(portal);
  });
  afterAll(async () => {
    await db.end();
    await portal.close();
  });

  it('five failures from one address lock that address only; the right password from another address still works', async () => {
    const user = await createUser(portal);
    for (let i = 0; i < 5; i++)
      expect((await passwordGrantFrom(portal, '127.0.0.2', user.email, 'wrong-password-000')).status).toBe(400);
    const lockedOut = await passwordGrantFrom(portal, '127.0.0.2', user.email, user.password);
    expect(lockedOut).toEqual({
      status: 429,
      body: { error: 'too_many_attempts', error_description: 'Too many failed logins; try again later' },
    });
    const elsewhere = await passwordGrantFrom(portal, '127.0.0.3', user.email, user.password);
    expect(elsewhere.status).toBe(200);
    const { rows } = await db.query(
      'SELECT address, failed_logins FROM login_failures WHERE email_normalized = $1 ORDER BY address',
      [user.email],
    );
    expect(rows).toEqual([{ address: '127.0.0.2', failed_logins: 5 }]);
  });

  it('past SVC_LOGIN_SLOW_AFTER failures across addresses, the right password from a fresh address is slowed, not refused', async () => {
    const user = await createUser(portal);
    for (const from of ['127.0.0.4', '127.0.0.5']) {
      for (let i = 0; i < 4; i++)
        expect((await passwordGrantFrom(portal, from, user.email, 'wrong-password-000')).status).toBe(400);
    }
    expect(
      (await db.query('SELECT failed_logins FROM login_email_failures WHERE email_normalized = $1', [user.email])).rows,
    ).toEqual([{ failed_logins: 8 }]);
    const started = performance.now();
    const right = await passwordGrantFrom(portal, '127.0.0.6', user.email, user.password);
    // A deliberate delay (a lower bound, not a performance measurement).
    expect(performance.now() - started).toBeGreaterThanOrEqual(1500);
    expect(right.status).toBe(200);
    // The success clears the count across addresses.
    expect(
      (await db.query('SELECT failed_logins FROM login_email_failures WHERE email_normalized = $1', [user.email])).rows,
    ).toEqual([]);
  });

  it('refuses cross-site browser posts (Sec-Fetch-Site, foreign Origin) with 403 and counts nothing; same-origin and non-browser clients work', async () => {
    const user = await createUser(portal);
    const refused = { error: 'invalid_request', error_description: 'cross-site request refused' };
    const crossSite = await passwordGrant(portal, user.email, 'wrong-password-000', { 'sec-fetch-site': 'cross-site' });
    expect({ status: crossSite.status, body: crossSite.body }).toEqual({ status: 403, body: refused });
    const foreign = await passwordGrant(portal, user.email, 'wrong-password-000', { origin: 'https://evil.example' });
    expect({ status: foreign.status, body: foreign.body }).toEqual({ status: 403, body: refused });
    const opaque = await passwordGrant(portal, user.email, 'wrong-password-000', { origin: 'null' });
    expect(opaque.status).toBe(403);
    expect(
      (await db.query('SELECT count(*)::int AS n FROM login_failures WHERE email_normalized = $1', [user.email]))
        .rows[0].n,
    ).toBe(0);
    expect(
      (
        await passwordGrant(portal, user.email, user.password, {
          origin: 'http://portal.test',
          'sec-fetch-site': 'same-origin',
        })
      ).status,
    ).toBe(200);
    expect((await passwordGrant(portal, user.email, user.password)).status).toBe(200);
  });
});

describe('the signing key at rest', () => {
  let db: pg.Pool | null = null;
  afterAll(async () => {
    await db?.end();
  });

  async function keyRow(pool: pg.Pool) {
    const { rows } = await pool.query(
      'SELECT kid, private_jwk, private_jwk_encrypted, public_jwk, row_to_json(k)::text AS raw FROM identity_signing_keys k',
    );
    expect(rows).toHaveLength(1);
    return rows[0] as {
      kid: string;
      private_jwk: unknown;
      private_jwk_encrypted: string | null;
      public_jwk: { x: string };
      raw: string;
    };
  }

  it('generates <SVC_DATA_DIR>/identity-key (mode 600), stores the private key only encrypted, and a restart with the same key signs tokens that verify', async () => {
    const first = await startTestPortal({ env: { SVC_IDENTITY_KEY_ENCRYPTION_KEY: undefined } });
    db = openDb(first);
    const token = await first.adminToken();
    const keyFile = path.join(first.dataDir, 'identity-key');
    expect((await fs.stat(keyFile)).mode & 0o777).toBe(0o600);
    expect((await fs.readFile(keyFile, 'utf8')).trim()).toMatch(/^[0-9a-f]{64}$/);
    const row = await keyRow(db);
    expect(row.private_jwk).toBeNull();
    expect(row.private_jwk_encrypted).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
    // No private member of the JWK anywhere in the row: only the public x.
    expect(row.raw).not.toMatch(/"d"/);
    await first.close();

    const second = await startTestPortal({
      databaseUrl: first.databaseUrl,
      env: { SVC_DATA_DIR: first.dataDir, SVC_IDENTITY_KEY_ENCRYPTION_KEY: undefined },
    });
    try {
      expect((await keyRow(db)).kid).toBe(row.kid);
      expect((await http(second.url, 'GET', '/identity/user', { headers: bearer(token) })).status).toBe(200);
      expect(
        (await http(second.url, 'GET', '/identity/user', { headers: bearer(await second.adminToken()) })).status,
      ).toBe(200);
    } finally {
      await second.close();
    }
  });

  it('encrypts a key stored in clear by an earlier version on start, keeping its kid', async () => {
    const kek = randomBytes(32).toString('hex');
    const first = await startTestPortal({ env: { SVC_IDENTITY_KEY_ENCRYPTION_KEY: kek } });
    const pool = openDb(first);
    try {
      const token = await first.adminToken();
      await first.close();
      // What a portal before migration 0010's code left behind: the private JWK in clear.
      const { decryptPrivateJwk } = await import('../src/identity/key-encryption.ts');
      const before = await keyRow(pool);
      const clear = decryptPrivateJwk(Buffer.from(kek, 'hex'), before.kid, before.private_jwk_encrypted!);
      await pool.query('UPDATE identity_signing_keys SET private_jwk = $1, private_jwk_encrypted = NULL', [
        JSON.stringify(clear),
      ]);

      const second = await startTestPortal({
        databaseUrl: first.databaseUrl,
        env: { SVC_IDENTITY_KEY_ENCRYPTION_KEY: kek },
      });
      try {
        const after = await keyRow(pool);
        expect(after.kid).toBe(before.kid);
        expect(after.private_jwk).toBeNull();
        expect(after.private_jwk_encrypted).toMatch(/^v1\./);
        expect(after.raw).not.toContain((clear as { d: string }).d);
        expect((await http(second.url, 'GET', '/identity/user', { headers: bearer(token) })).status).toBe(200);
      } finally {
        await second.close();
      }
    } finally {
      await pool.end();
    }
  });

  it('refuses to start with a key that does not decrypt the stored one, with a clear message that carries no secret', async () => {
    const kek = randomBytes(32).toString('hex');
    const first = await startTestPortal({ env: { SVC_IDENTITY_KEY_ENCRYPTION_KEY: kek } });
    await first.close();
    const wrong = randomBytes(32).toString('hex');
    const err = await startTestPortal({
      databaseUrl: first.databaseUrl,
      env: { SVC_IDENTITY_KEY_ENCRYPTION_KEY: wrong },
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message).toMatch(
      /^Invalid configuration: SVC_IDENTITY_KEY_ENCRYPTION_KEY does not decrypt the identity provider's signing key/,
    );
    expect((err as ConfigError).message).not.toContain(wrong);
    expect((err as ConfigError).message).not.toContain(kek);
  });

  it('a real portal process with the wrong key exits with code 2 and one line naming the variable, not a secret', async () => {
    const kek = randomBytes(32).toString('hex');
    const first = await startTestPortal({ env: { SVC_IDENTITY_KEY_ENCRYPTION_KEY: kek } });
    await first.close();
    const wrong = randomBytes(32).toString('hex');
    try {
      const p = await spawnPortal({
        dataDir: await makeDataDir('svc-identity-'),
        env: { DATABASE_URL: first.databaseUrl, SVC_IDENTITY_KEY_ENCRYPTION_KEY: wrong },
      });
      expect(await waitForExit(p, 60_000)).toEqual({ code: 2, signal: null });
      expect(p.stderr()).toMatch(
        /^Invalid configuration: SVC_IDENTITY_KEY_ENCRYPTION_KEY does not decrypt the identity provider's signing key \(kid [0-9a-f]{16}\): [^\n]*\n$/,
      );
      expect(p.stderr() + p.stdout()).not.toContain(wrong);
      expect(p.stderr() + p.stdout()).not.toContain(kek);
    } finally {
      await killAll();
    }
  });

  it('refuses a malformed SVC_IDENTITY_KEY_ENCRYPTION_KEY in the configuration', () => {
    for (const value of ['too-short', 'ab'.repeat(31)]) {
      let err: unknown;
      try {
        loadConfig({ SVC_IDENTITY_KEY_ENCRYPTION_KEY: value }, '/srv/portal');
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).message).toBe(
        'Invalid configuration: SVC_IDENTITY_KEY_ENCRYPTION_KEY must be 32 bytes as 64 hex digits or base64 (e.g. openssl rand -hex 32)',
      );
    }
    expect(
      loadConfig({ SVC_IDENTITY_KEY_ENCRYPTION_KEY: 'ab'.repeat(32) }, '/srv/portal').identity.keyEncryptionKey,
    ).toEqual(Buffer.alloc(32, 0xab));
  });
});

describe('identity configuration', () => {
  const configError = (env: Record<string, string>): ConfigError => {
    try {
      loadConfig(env, '/srv/portal');
    } catch (err) {
      if (err instanceof ConfigError) return err;
      throw err;
    }
    throw new Error('no ConfigError');
  };

  it('defaults: families end after 30 days, logins slow after 20 failures by 2 s, key from the data directory', () => {
    expect(loadConfig({}, '/srv/portal').identity).toEqual({
      refreshFamilyMaxDays: 30,
      loginSlowAfter: 20,
      loginSlowDelayMs: 2000,
      keyEncryptionKey: null,
    });
    expect(
      loadConfig(
        { SVC_REFRESH_FAMILY_MAX_DAYS: '7', SVC_LOGIN_SLOW_AFTER: '50', SVC_LOGIN_SLOW_DELAY_MS: '0' },
        '/srv/portal',
      ).identity,
    ).toMatchObject({
      refreshFamilyMaxDays: 7,
      loginSlowAfter: 50,
      loginSlowDelayMs: 0,
    });
  });

  it.each([
    [
      { SVC_REFRESH_FAMILY_MAX_DAYS: '0' },
      'Invalid configuration: SVC_REFRESH_FAMILY_MAX_DAYS must be between 1 and 3650 (got 0)',
    ],
    [
      { SVC_REFRESH_FAMILY_MAX_DAYS: 'month' },
      'Invalid configuration: SVC_REFRESH_FAMILY_MAX_DAYS must be a whole number between 1 and 3650 (got "month")',
    ],
    [
      { SVC_LOGIN_SLOW_AFTER: '0' },
      'Invalid configuration: SVC_LOGIN_SLOW_AFTER must be between 1 and 1000000 (got 0)',
    ],
    [
      { SVC_LOGIN_SLOW_DELAY_MS: '30001' },
      'Invalid configuration: SVC_LOGIN_SLOW_DELAY_MS must be between 0 and 30000 (got 30001)',
    ],
  ])('refuses %o', (env, message) => {
    expect(configError(env).message).toBe(message);
  });
});

describe('migration 0010 on a database an older portal left', () => {
  it('starts a family per refresh-token chain (at its oldest token, revoked when all its tokens are), keys failures by address and keeps the clear key for the start to encrypt', async () => {
    const url = await createTestDatabase();
    const handle = openDatabase(url, { max: 2, logger: pino({ level: 'silent' }) });
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      await migrateBefore(handle.db, '0010');
      await pool.query(`
        INSERT INTO users (id, email, email_normalized, password_hash, role, updated_at) VALUES ('usr_a', 'a@example.test', 'a@example.test', 'x', 'admin', now());
        INSERT INTO refresh_tokens (token_hash, user_id, family_id, expires_at, used_at, revoked_at, created_at) VALUES
          ('h1', 'usr_a', 'live', '2026-12-30T00:00:00Z', '2026-11-02T00:00:00Z', NULL, '2026-11-01T00:00:00Z'),
          ('h2', 'usr_a', 'live', '2026-12-31T00:00:00Z', NULL, NULL, '2026-11-02T00:00:00Z'),
          ('h3', 'usr_a', 'dead', '2026-12-31T00:00:00Z', NULL, '2026-11-05T00:00:00Z', '2026-11-03T00:00:00Z');
        INSERT INTO login_failures (email_normalized, failed_logins, locked_until, updated_at) VALUES ('a@example.test', 3, NULL, '2026-11-22T10:00:00Z');
        INSERT INTO identity_signing_keys (kid, private_jwk, public_jwk) VALUES ('k1', '{"kty":"OKP","d":"secret"}', '{"kty":"OKP"}');
      `);
      await migrateToLatest(handle.db);
      expect(
        (await pool.query('SELECT id, user_id, started_at, revoked_at FROM token_families ORDER BY id')).rows,
      ).toEqual([
        {
          id: 'dead',
          user_id: 'usr_a',
          started_at: new Date('2026-11-03T00:00:00Z'),
          revoked_at: new Date('2026-11-05T00:00:00Z'),
        },
        { id: 'live', user_id: 'usr_a', started_at: new Date('2026-11-01T00:00:00Z'), revoked_at: null },
      ]);
      // The address of an old count is unknown: '' never matches a client, and the count is pruned after a day.
      expect((await pool.query('SELECT email_normalized, address, failed_logins FROM login_failures')).rows).toEqual([
        { email_normalized: 'a@example.test', address: '', failed_logins: 3 },
      ]);
      expect((await pool.query('SELECT tokens_valid_after FROM users')).rows).toEqual([{ tokens_valid_after: null }]);
      expect((await pool.query('SELECT private_jwk, private_jwk_encrypted FROM identity_signing_keys')).rows).toEqual([
        { private_jwk: { kty: 'OKP', d: 'secret' }, private_jwk_encrypted: null },
      ]);
    } finally {
      await pool.end();
      await handle.close();
    }
  });
});
