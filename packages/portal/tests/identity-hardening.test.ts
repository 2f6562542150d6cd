import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config/index.ts';
import { http, type HttpResult } from './helpers/http.ts';
import { startTestPortal, type TestPortal } from './helpers/portal.ts';

/** Issue 11 hardening of the portal's own identity provider (README "Security and limits", Identity). */

function fakeClock() {
  let t = Math.floor(Date.now() / 1000) * 1000;
  return {
    now: () => new Date(t),
    advance(ms: number) {
      t += ms;
    },
  };
}

function tokenRequest(portal: TestPortal, form: Record<string, string>, headers: Record<string, string> = {}): Promise<HttpResult> {
  return http(portal.url, 'POST', '/identity/token', { form, headers });
}

const passwordGrant = (portal: TestPortal, username: string, password: string, headers: Record<string, string> = {}) =>
  tokenRequest(portal, { grant_type: 'password', username, password }, headers);
const refreshGrant = (portal: TestPortal, refreshToken: string) => tokenRequest(portal, { grant_type: 'refresh_token', refresh_token: refreshToken });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

function openDb(portal: TestPortal): pg.Pool {
  const pool = new pg.Pool({ connectionString: portal.databaseUrl, max: 3 });
  pool.on('error', () => {});
  return pool;
}

async function createUser(portal: TestPortal): Promise<{ id: string; email: string; password: string }> {
  const email = `user-${randomBytes(4).toString('hex')}@example.test`;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const res = await http(portal.url, 'POST', '/identity/admin/users', { headers: bearer(await portal.adminToken()), json: { email, password, role: 'member', client_ids: ['acme'] } });
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
    expect(res.body.error).toMatch(/^Password is too weak \(strength 0 of 4, at least 3 required\): Repeated characters like "aaa" are easy to guess\./);
    expect(res.body.error).not.toContain('aaaaaaaaaaaa');
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM users WHERE email_normalized = 'weak@example.test'`);
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

  it('refuses a weak new password on update and keeps the old one', async () => {
    const user = await createUser(portal);
    const before = (await db.query('SELECT password_hash FROM users WHERE id = $1', [user.id])).rows[0].password_hash;
    const res = await http(portal.url, 'PATCH', `/identity/admin/users?id=${user.id}`, { headers: bearer(await portal.adminToken()), json: { password: 'password1234' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^Password is too weak \(strength \d of 4, at least 3 required\)/);
    expect((await db.query('SELECT password_hash FROM users WHERE id = $1', [user.id])).rows[0].password_hash).toBe(before);
    expect((await passwordGrant(portal, user.email, user.password)).status).toBe(200);
  });

  it('refuses a weak SVC_ADMIN_PASSWORD at start with a message naming the variable, not the password', () => {
    let err: unknown;
    try {
      loadConfig({ SVC_ADMIN_EMAIL: 'root@example.com', SVC_ADMIN_PASSWORD: 'aaaaaaaaaaaa' }, '/srv/portal');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).variable).toBe('SVC_ADMIN_PASSWORD');
    expect((err as ConfigError).message).toMatch(/^Invalid configuration: SVC_ADMIN_PASSWORD is too weak \(strength 0 of 4, at least 3 required\)/);
    expect((err as ConfigError).message).not.toContain('aaaaaaaaaaaa');
    expect((err as ConfigError).message).not.toContain('\n');
  });
});
