import type pg from 'pg';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  highestTier,
  LICENSE_KEY_PATTERN,
  LICENSE_KEY_PREFIX_LENGTH,
  PERMISSIONS,
  permissionsOf,
  SEGMENT_OF_TIER,
  TIER_DEFAULT_LIMITS,
  TIER_SEGMENTS,
  tierAllows,
  TIERS,
  type Permission,
  type Tier,
} from '@svc/protocol';
import { actorOf, inScope, scopeOf, type Principal } from '../src/auth/principal.ts';
import { resolveUser } from '../src/auth/users.ts';
import type { AppContext } from '../src/context.ts';
import type { LicenseRow } from '../src/licenses/present.ts';
import {
  createLicense,
  createScopedUser,
  DAY_MS,
  FakeClock,
  licenseAction,
  uniqueClientId,
  type ScopedUser,
} from '@svc/test-support/factories';
import { http, withToken } from '@svc/test-support/http';
import { ADMIN_EMAIL, ADMIN_PASSWORD, login, type TestPortal } from '@svc/test-support/portal';
import { usePortalWithDb } from '@svc/test-support/portal-db';

/** docs/api.md#credentials, docs/api.md#agents-and-commands (agent:commands for business and msp) and docs/api.md#credentials (scoped users). */

const MATRIX: Record<Permission, Record<Tier, boolean>> = {
  upload: { professional: true, business: true, msp: true },
  download: { professional: true, business: true, msp: true },
  'sessions:read': { professional: true, business: true, msp: true },
  'update:status': { professional: true, business: true, msp: true },
  benchmark: { professional: false, business: true, msp: true },
  'remediation:update': { professional: false, business: true, msp: true },
  webhooks: { professional: false, business: true, msp: true },
  compliance: { professional: false, business: true, msp: true },
  'agent:commands': { professional: false, business: true, msp: true },
  'db:health': { professional: false, business: false, msp: true },
  audit: { professional: false, business: false, msp: true },
  'health:agents': { professional: false, business: false, msp: true },
  'agent:groups': { professional: false, business: false, msp: true },
};

describe('the permission matrix (protocol)', () => {
  it('has exactly the 13 permissions and the 3 tiers', () => {
    expect([...PERMISSIONS].sort()).toEqual(Object.keys(MATRIX).sort());
    expect(PERMISSIONS).toHaveLength(13);
    expect(new Set(PERMISSIONS).size).toBe(13);
    expect([...TIERS]).toEqual(['professional', 'business', 'msp']);
  });

  for (const permission of Object.keys(MATRIX) as Permission[]) {
    for (const tier of TIERS) {
      const allowed = MATRIX[permission][tier];
      it(`${tier} ${allowed ? 'has' : 'lacks'} ${permission}`, () => {
        expect(tierAllows(tier, permission)).toBe(allowed);
        expect(permissionsOf(tier).has(permission)).toBe(allowed);
      });
    }
  }

  it('each tier has exactly its permissions, and each tier includes the one below', () => {
    for (const tier of TIERS) {
      const expected = (Object.keys(MATRIX) as Permission[]).filter((p) => MATRIX[p][tier]).sort();
      expect([...permissionsOf(tier)].sort(), tier).toEqual(expected);
    }
    expect(permissionsOf('professional').size).toBe(4);
    expect(permissionsOf('business').size).toBe(9);
    expect(permissionsOf('msp').size).toBe(13);
    for (const p of permissionsOf('professional')) expect(permissionsOf('business').has(p)).toBe(true);
    for (const p of permissionsOf('business')) expect(permissionsOf('msp').has(p)).toBe(true);
  });

  it('highestTier picks the highest, professional (or the fallback) when there is none', () => {
    expect(highestTier([])).toBe('professional');
    expect(highestTier([], 'msp')).toBe('msp');
    expect(highestTier(['professional'])).toBe('professional');
    expect(highestTier(['professional', 'business'])).toBe('business');
    expect(highestTier(['business', 'professional'])).toBe('business');
    expect(highestTier(['business', 'msp', 'professional'])).toBe('msp');
    expect(highestTier(['msp', 'business'])).toBe('msp');
    expect(highestTier(new Set<Tier>(['business', 'business']))).toBe('business');
    expect(highestTier(['professional'], 'msp')).toBe('professional');
  });

  it('key format, segments and default limits', () => {
    expect(TIER_SEGMENTS).toEqual({ pro: 'professional', biz: 'business', msp: 'msp' });
    expect(SEGMENT_OF_TIER).toEqual({ professional: 'pro', business: 'biz', msp: 'msp' });
    expect(LICENSE_KEY_PREFIX_LENGTH).toBe(14);
    expect(TIER_DEFAULT_LIMITS).toEqual({
      professional: { max_sessions: 50, max_agents: 5 },
      business: { max_sessions: 500, max_agents: 25 },
      msp: { max_sessions: null, max_agents: null },
    });
    const hex = 'ab'.repeat(32);
    for (const seg of ['pro', 'biz', 'msp']) expect(LICENSE_KEY_PATTERN.test(`svc_${seg}_${hex}`)).toBe(true);
    for (const bad of [
      `svc_ent_${hex}`,
      `svc_pro_${hex}0`,
      `svc_pro_${hex.slice(1)}`,
      `svc_pro_${hex.toUpperCase()}`,
      ` svc_pro_${hex}`,
      `svc_pro_${hex}\n`,
    ]) {
      expect(LICENSE_KEY_PATTERN.test(bad), JSON.stringify(bad)).toBe(false);
    }
  });
});

describe('principals (unit)', () => {
  const license = { id: 'lic_00000000000000aa', client_id: 'acme' } as LicenseRow;
  const principals: Record<string, Principal> = {
    license: { kind: 'license', tier: 'business', clientId: 'acme', permissions: permissionsOf('business'), license },
    legacy: { kind: 'legacy', tier: 'msp', clientId: null, permissions: new Set(PERMISSIONS) },
    admin: {
      kind: 'user',
      subject: 'usr_1',
      email: 'root@x.test',
      admin: true,
      clientIds: null,
      tier: 'msp',
      permissions: new Set(PERMISSIONS),
    },
    member: {
      kind: 'user',
      subject: 'usr_2',
      email: null,
      admin: false,
      clientIds: ['a', 'b'],
      tier: 'professional',
      permissions: permissionsOf('professional'),
    },
    nobody: {
      kind: 'user',
      subject: 'usr_3',
      email: 'n@x.test',
      admin: false,
      clientIds: [],
      tier: 'professional',
      permissions: permissionsOf('professional'),
    },
  };

  it('scopeOf and inScope come from the credential', () => {
    const p = principals as Record<'license' | 'legacy' | 'admin' | 'member' | 'nobody', Principal>;
    expect(scopeOf(p.license)).toEqual(['acme']);
    expect(scopeOf(p.legacy)).toBeNull();
    expect(scopeOf(p.admin)).toBeNull();
    expect(scopeOf(p.member)).toEqual(['a', 'b']);
    expect(scopeOf(p.nobody)).toEqual([]);

    expect(inScope(p.license, 'acme')).toBe(true);
    expect(inScope(p.license, 'other')).toBe(false);
    expect(inScope(p.license, null)).toBe(false);
    expect(inScope(p.legacy, 'anything')).toBe(true);
    expect(inScope(p.legacy, null)).toBe(true);
    expect(inScope(p.admin, null)).toBe(true);
    expect(inScope(p.member, 'b')).toBe(true);
    expect(inScope(p.member, 'c')).toBe(false);
    expect(inScope(p.member, null)).toBe(false);
    expect(inScope(p.nobody, 'a')).toBe(false);
  });

  it('actorOf names the caller', () => {
    const p = principals as Record<'license' | 'legacy' | 'admin' | 'member', Principal>;
    expect(actorOf(p.license)).toBe('license:lic_00000000000000aa');
    expect(actorOf(p.legacy)).toBe('legacy-key');
    expect(actorOf(p.admin)).toBe('root@x.test');
    expect(actorOf(p.member)).toBe('usr_2');
  });
});

describe('scoped users on a real portal', () => {
  const clock = new FakeClock();
  let portal: TestPortal;
  let db: pg.Client;
  let admin: string;

  usePortalWithDb(
    async (p) => {
      ({ portal, db } = p);
      admin = await portal.adminToken();
    },
    { now: clock.now },
  );
  beforeEach(() => {
    clock.set(new Date());
  });

  const audit = (token: string, query = '') =>
    http(portal.url, 'GET', `/api/audit${query}`, { headers: withToken(token) });
  async function expectAuditDenied(user: ScopedUser) {
    const res = await audit(user.token);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'Insufficient permissions for audit' });
  }
  async function plant(
    clientId: string | null,
    eventType = 'scan_completed',
    sessionId: string | null = null,
  ): Promise<number> {
    const { rows } = await db.query(
      "INSERT INTO audit_events (event_type, client_id, session_id, actor, data) VALUES ($1, $2, $3, 'planted', '{}') RETURNING id",
      [eventType, clientId, sessionId],
    );
    return Number(rows[0].id);
  }

  it("the tier is the highest among the active keys of the user's clients: professional and business are not enough for audit, msp is", async () => {
    const clientId = uniqueClientId('tiered');
    const member = await createScopedUser(portal, [clientId]);

    // No key at all: professional's permissions.
    await expectAuditDenied(member);
    await createLicense(portal, { tier: 'professional', client_id: clientId });
    await expectAuditDenied(member);
    await createLicense(portal, { tier: 'business', client_id: clientId });
    await expectAuditDenied(member);
    // An msp key of another client does not count.
    await createLicense(portal, { tier: 'msp', client_id: uniqueClientId('elsewhere') });
    await expectAuditDenied(member);

    const msp = await createLicense(portal, { tier: 'msp', client_id: clientId });
    const ok = await audit(member.token);
    expect(ok.status).toBe(200);
    expect(ok.body.events.length).toBeGreaterThan(0);
    for (const e of ok.body.events) expect(e.client_id).toBe(clientId);

    // Revoked: no longer counts.
    await licenseAction(portal, msp.record.id, 'revoke');
    await expectAuditDenied(member);
  });

  it('an inactive msp key does not count until it is activated again', async () => {
    const clientId = uniqueClientId('inactive');
    const member = await createScopedUser(portal, [clientId]);
    const msp = await createLicense(portal, { tier: 'msp', client_id: clientId });
    expect((await audit(member.token)).status).toBe(200);
    await licenseAction(portal, msp.record.id, 'deactivate');
    await expectAuditDenied(member);
    await licenseAction(portal, msp.record.id, 'activate');
    expect((await audit(member.token)).status).toBe(200);
  });

  it('an expired msp key does not count (from the instant of expiry, on the portal clock)', async () => {
    const clientId = uniqueClientId('expiring');
    const member = await createScopedUser(portal, [clientId]);
    const expiresAt = new Date(clock.now().getTime() + DAY_MS);
    await createLicense(portal, { tier: 'msp', client_id: clientId, expires_at: expiresAt.toISOString() });
    clock.set(new Date(expiresAt.getTime() - 1));
    // Tokens are checked against the portal's clock: a day later the member signs in again.
    const later = { ...member, token: await login(portal.url, member.email, member.password) };
    expect((await audit(later.token)).status).toBe(200);
    clock.set(expiresAt);
    await expectAuditDenied(later);
    // Another, still valid business key keeps the client at business: still no audit.
    // (Creating it needs an admin token issued on the portal's clock too.)
    const admin = await login(portal.url, ADMIN_EMAIL, ADMIN_PASSWORD);
    const res = await http(portal.url, 'POST', '/api/licenses', {
      headers: withToken(admin),
      json: { tier: 'business', client_id: clientId, name: 'still valid' },
    });
    expect(res.status).toBe(201);
    await expectAuditDenied(later);
  });

  it("a member sees only its own clients' events; no query parameter widens that", async () => {
    const a = uniqueClientId('a');
    const b = uniqueClientId('b');
    const other = uniqueClientId('other');
    await createLicense(portal, { tier: 'msp', client_id: b }); // msp via b, one of the member's clients
    await createLicense(portal, { tier: 'msp', client_id: other });
    const member = await createScopedUser(portal, [a, b]);
    const session = `S_${uniqueClientId('s').replace(/-/g, '_')}`;
    const mine = [
      await plant(a, 'scan_completed', session),
      await plant(b, 'status_changed', session),
      await plant(a, 'session_deleted', session),
    ];
    const theirs = [await plant(other, 'scan_completed', session), await plant(null, 'scan_completed', session)];

    const res = await audit(member.token, `?session=${session}`);
    expect(res.status).toBe(200);
    expect(res.body.events.map((e: any) => e.id)).toEqual([...mine].reverse());
    expect(res.body.total).toBe(3);

    // Everything the member can see belongs to a or b: never another client's, never a client-less event.
    const all = await audit(member.token, '?days=90');
    expect(all.status).toBe(200);
    expect(all.body.events.length).toBe(all.body.total);
    for (const e of all.body.events) expect([a, b]).toContain(e.client_id);
    expect(all.body.events.map((e: any) => e.id)).toEqual(expect.arrayContaining(mine));
    for (const id of theirs) expect(all.body.events.map((e: any) => e.id)).not.toContain(id);
    // b's license_created event is there, other's is not.
    expect(all.body.events.filter((e: any) => e.event_type === 'license_created').map((e: any) => e.client_id)).toEqual(
      [b],
    );

    // A client_id parameter is not a filter anyone may use: 400 as an unknown field, for members and admins.
    for (const token of [member.token, admin]) {
      for (const q of [
        `?client_id=${other}`,
        `?client_id=${a}`,
        `?session=${session}&client_id=${other}`,
        `?client_ids=${other}`,
      ]) {
        const r = await audit(token, q);
        expect(r.status, q).toBe(400);
        expect(r.body.error).toMatch(
          /^Invalid query: querystring must NOT have additional properties \(client_ids?\)$/,
        );
      }
    }

    // The admin sees everything, including client-less events.
    const adminView = await audit(admin, `?session=${session}`);
    expect(adminView.body.events.map((e: any) => e.id)).toEqual([...mine, ...theirs].sort((x, y) => y - x));
  });

  it('an msp member naming a client_id in a query or body is still not an administrator of keys', async () => {
    const own = uniqueClientId('own');
    await createLicense(portal, { tier: 'msp', client_id: own });
    const member = await createScopedUser(portal, [own]);
    const before = Number((await db.query('SELECT count(*)::int AS n FROM licenses')).rows[0].n);
    const attempts = [
      http(portal.url, 'GET', `/api/licenses?client_id=${own}`, { headers: withToken(member.token) }),
      http(portal.url, 'POST', '/api/licenses', {
        headers: withToken(member.token),
        json: { tier: 'msp', client_id: own, name: 'self-service' },
      }),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'Admin access required' });
    }
    expect(Number((await db.query('SELECT count(*)::int AS n FROM licenses')).rows[0].n)).toBe(before);
  });

  it('a member without an msp key never gets further, whatever it asks for', async () => {
    const clientId = uniqueClientId('pro');
    await createLicense(portal, { tier: 'business', client_id: clientId });
    const member = await createScopedUser(portal, [clientId]);
    for (const q of ['', '?days=90', '?client_id=x', '?type=bogus']) {
      const r = await audit(member.token, q);
      expect(r.status, q).toBe(403);
      expect(r.body).toEqual({ error: 'Insufficient permissions for audit' });
    }
  });

  it("scope and role come from the user record at request time, not from the token's claims", async () => {
    const a = uniqueClientId('was');
    const b = uniqueClientId('now');
    await createLicense(portal, { tier: 'msp', client_id: a });
    const member = await createScopedUser(portal, [a]);
    const eA = await plant(a);
    const eB = await plant(b);
    const ids = async () => (await audit(member.token, '?days=1')).body.events.map((e: any) => e.id);
    expect(await ids()).toContain(eA);

    // Moving the user to client b (which has no key) drops it to professional at once.
    await db.query('UPDATE users SET client_ids = $1 WHERE id = $2', [[b], member.id]);
    await expectAuditDenied(member);
    await createLicense(portal, { tier: 'msp', client_id: b });
    const now = await ids();
    expect(now).toContain(eB);
    expect(now).not.toContain(eA);

    // Promotion to admin and back, with the same token.
    await db.query("UPDATE users SET role = 'admin' WHERE id = $1", [member.id]);
    expect((await http(portal.url, 'GET', '/api/licenses', { headers: withToken(member.token) })).status).toBe(200);
    await db.query("UPDATE users SET role = 'member' WHERE id = $1", [member.id]);
    const demoted = await http(portal.url, 'GET', '/api/licenses', { headers: withToken(member.token) });
    expect(demoted.status).toBe(403);
    expect(demoted.body).toEqual({ error: 'Admin access required' });
  });

  describe('claims of an external identity provider (resolveUser)', () => {
    const payloads: Record<string, Record<string, unknown> | null> = {};
    let ctx: AppContext;
    let bizClient: string;
    beforeAll(async () => {
      bizClient = uniqueClientId('ext');
      await createLicense(portal, { tier: 'business', client_id: bizClient });
      ctx = { ...portal.ctx, tokens: { mode: 'external', verify: async (t: string) => (payloads[t] ?? null) as any } };
    });

    const resolve = async (payload: Record<string, unknown> | null) => {
      const t = `t${Object.keys(payloads).length}`;
      payloads[t] = payload;
      const u = await resolveUser(ctx, t);
      return u && { ...u, permissions: [...u.permissions].sort() };
    };
    const all = [...PERMISSIONS].sort();
    const pro = [...permissionsOf('professional')].sort();

    it('no role and no client_ids, or role admin: an administrator with every permission', async () => {
      expect(await resolve({ sub: 'u1', email: 'ext@x.test' })).toEqual({
        kind: 'user',
        subject: 'u1',
        email: 'ext@x.test',
        admin: true,
        clientIds: null,
        tier: 'msp',
        permissions: all,
      });
      expect(await resolve({ sub: 'u2', role: 'admin', client_ids: ['x'] })).toEqual({
        kind: 'user',
        subject: 'u2',
        email: null,
        admin: true,
        clientIds: null,
        tier: 'msp',
        permissions: all,
      });
    });

    it("a role other than admin, or client_ids: scoped, with the tier of its clients' keys", async () => {
      expect(await resolve({ sub: 'u3', role: 'member', client_ids: [bizClient] })).toEqual({
        kind: 'user',
        subject: 'u3',
        email: null,
        admin: false,
        clientIds: [bizClient],
        tier: 'business',
        permissions: [...permissionsOf('business')].sort(),
      });
      expect(await resolve({ sub: 'u4', client_ids: [bizClient, 'nothing-here'] })).toMatchObject({
        admin: false,
        clientIds: [bizClient, 'nothing-here'],
        tier: 'business',
      });
      expect(await resolve({ sub: 'u5', role: 'viewer', client_ids: ['nothing-here'] })).toMatchObject({
        admin: false,
        clientIds: ['nothing-here'],
        tier: 'professional',
        permissions: pro,
      });
    });

    it('missing or malformed client_ids on a scoped user: no clients at all, never everything', async () => {
      for (const payload of [
        { sub: 'u6', role: 'member' },
        { sub: 'u7', role: 'member', client_ids: bizClient },
        { sub: 'u8', role: 'member', client_ids: [bizClient, 7] },
        { sub: 'u9', role: 'member', client_ids: null },
        { sub: 'u10', client_ids: { 0: bizClient } },
        { sub: 'u11', role: 'ADMIN' },
      ]) {
        expect(await resolve(payload), JSON.stringify(payload)).toMatchObject({
          admin: false,
          clientIds: [],
          tier: 'professional',
          permissions: pro,
        });
      }
    });

    it('no verified token or no subject: nobody', async () => {
      expect(await resolve(null)).toBeNull();
      expect(await resolve({ role: 'admin' })).toBeNull();
      expect(await resolve({ sub: '' })).toBeNull();
    });
  });
});
