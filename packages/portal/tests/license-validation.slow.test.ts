import type pg from 'pg';
import { beforeEach, describe, expect, it } from 'vitest';
import { createLicense, DAY_MS, FakeClock, licenseAction, uniqueClientId } from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { LEGACY_KEY, type TestPortal } from '@svc/test-support/portal';
import { usePortalWithDb } from '@svc/test-support/portal-db';

/** GET /api/license (docs/api.md#credentials). */

const FIELDS = [
  'active',
  'checked_at',
  'client_id',
  'expires_at',
  'legacy',
  'limits',
  'reason',
  'revoked',
  'tier',
  'valid',
];
const hex64 = (c: string) => c.repeat(64);

describe('GET /api/license', () => {
  const clock = new FakeClock();
  let portal: TestPortal;
  let db: pg.Client;

  usePortalWithDb(
    (p) => {
      ({ portal, db } = p);
    },
    { now: clock.now },
  );
  beforeEach(() => {
    clock.set(new Date(Math.floor(Date.now() / 1000) * 1000 + 123));
  });

  async function check(key: string | undefined) {
    const res = await http(portal.url, 'GET', '/api/license', { headers: key === undefined ? {} : withKey(key) });
    return res;
  }
  /** 200 with the whole field set, always. */
  async function validate(key: string) {
    const res = await check(key);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(res.body).sort()).toEqual(FIELDS);
    expect(Object.keys(res.body.limits).sort()).toEqual(['max_agents', 'max_sessions']);
    return res.body;
  }
  const unknownResult = (reason: 'not_found' | 'invalid_format', checkedAt: string) => ({
    valid: false,
    tier: null,
    client_id: null,
    active: false,
    revoked: false,
    expires_at: null,
    limits: { max_sessions: null, max_agents: null },
    reason,
    checked_at: checkedAt,
    legacy: false,
  });

  describe('reason ok', () => {
    for (const [tier, limits] of [
      ['professional', { max_sessions: 50, max_agents: 5 }],
      ['business', { max_sessions: 500, max_agents: 25 }],
      ['msp', { max_sessions: null, max_agents: null }],
    ] as const) {
      it(`a fresh ${tier} key is valid with its tier, client and default limits`, async () => {
        const clientId = uniqueClientId(tier);
        const { key } = await createLicense(portal, { tier, client_id: clientId });
        expect(await validate(key)).toEqual({
          valid: true,
          tier,
          client_id: clientId,
          active: true,
          revoked: false,
          expires_at: null,
          limits,
          reason: 'ok',
          checked_at: clock.now().toISOString(),
          legacy: false,
        });
      });
    }

    it('reports explicit limits and the expiry of a key that has not expired yet', async () => {
      const clientId = uniqueClientId();
      const expiresAt = new Date(clock.now().getTime() + 3 * DAY_MS).toISOString();
      const { key } = await createLicense(portal, {
        tier: 'business',
        client_id: clientId,
        max_sessions: 3,
        max_agents: null,
        expires_at: expiresAt,
      });
      expect(await validate(key)).toEqual({
        valid: true,
        tier: 'business',
        client_id: clientId,
        active: true,
        revoked: false,
        expires_at: expiresAt,
        limits: { max_sessions: 3, max_agents: null },
        reason: 'ok',
        checked_at: clock.now().toISOString(),
        legacy: false,
      });
    });

    it('the legacy shared key: valid, tier msp, legacy true, no client', async () => {
      expect(await validate(LEGACY_KEY)).toEqual({
        valid: true,
        tier: 'msp',
        client_id: null,
        active: true,
        revoked: false,
        expires_at: null,
        limits: { max_sessions: null, max_agents: null },
        reason: 'ok',
        checked_at: clock.now().toISOString(),
        legacy: true,
      });
    });

    it('surrounding whitespace in the header is not part of the key', async () => {
      const { key } = await createLicense(portal);
      const res = await http(portal.url, 'GET', '/api/license', { headers: { 'x-api-key': `  ${key}\t` } });
      expect(res.status).toBe(200);
      expect(res.body.reason).toBe('ok');
    });
  });

  describe('keys that are not valid: still 200', () => {
    it('revoked: valid false, revoked true, reason revoked; seen at once (the cache is cleared)', async () => {
      const clientId = uniqueClientId();
      const { key, record } = await createLicense(portal, { tier: 'msp', client_id: clientId });
      expect((await validate(key)).reason).toBe('ok'); // now cached
      await licenseAction(portal, record.id, 'revoke');
      expect(await validate(key)).toEqual({
        valid: false,
        tier: 'msp',
        client_id: clientId,
        active: true,
        revoked: true,
        expires_at: null,
        limits: { max_sessions: null, max_agents: null },
        reason: 'revoked',
        checked_at: clock.now().toISOString(),
        legacy: false,
      });
    });

    it('inactive: valid false, active false, reason inactive; activate makes it ok again', async () => {
      const clientId = uniqueClientId();
      const { key, record } = await createLicense(portal, { tier: 'professional', client_id: clientId });
      expect((await validate(key)).reason).toBe('ok');
      await licenseAction(portal, record.id, 'deactivate');
      expect(await validate(key)).toEqual({
        valid: false,
        tier: 'professional',
        client_id: clientId,
        active: false,
        revoked: false,
        expires_at: null,
        limits: { max_sessions: 50, max_agents: 5 },
        reason: 'inactive',
        checked_at: clock.now().toISOString(),
        legacy: false,
      });
      await licenseAction(portal, record.id, 'activate');
      expect(await validate(key)).toMatchObject({ valid: true, active: true, reason: 'ok' });
    });

    it('expired: ok until expires_at, expired from that instant on (fake clock)', async () => {
      const clientId = uniqueClientId();
      const expiresAt = new Date(clock.now().getTime() + 2 * DAY_MS);
      const { key } = await createLicense(portal, {
        tier: 'business',
        client_id: clientId,
        expires_at: expiresAt.toISOString(),
      });

      clock.set(new Date(expiresAt.getTime() - 1));
      expect(await validate(key)).toMatchObject({
        valid: true,
        reason: 'ok',
        checked_at: new Date(expiresAt.getTime() - 1).toISOString(),
      });

      clock.set(expiresAt);
      expect(await validate(key)).toEqual({
        valid: false,
        tier: 'business',
        client_id: clientId,
        active: true,
        revoked: false,
        expires_at: expiresAt.toISOString(),
        limits: { max_sessions: 500, max_agents: 25 },
        reason: 'expired',
        checked_at: expiresAt.toISOString(),
        legacy: false,
      });

      clock.advance(30 * DAY_MS);
      expect(await validate(key)).toMatchObject({
        valid: false,
        reason: 'expired',
        checked_at: clock.now().toISOString(),
      });
    });

    it('precedence: revoked beats expired, expired beats inactive', async () => {
      const expiresAt = new Date(clock.now().getTime() + DAY_MS).toISOString();
      const a = await createLicense(portal, { expires_at: expiresAt });
      const b = await createLicense(portal, { expires_at: expiresAt });
      const c = await createLicense(portal);
      await licenseAction(portal, a.record.id, 'revoke');
      await licenseAction(portal, b.record.id, 'deactivate');
      await licenseAction(portal, c.record.id, 'deactivate');
      await licenseAction(portal, c.record.id, 'revoke');
      clock.advance(2 * DAY_MS);
      expect(await validate(a.key)).toMatchObject({ valid: false, active: true, revoked: true, reason: 'revoked' });
      expect(await validate(b.key)).toMatchObject({ valid: false, active: false, revoked: false, reason: 'expired' });
      expect(await validate(c.key)).toMatchObject({ valid: false, active: false, revoked: true, reason: 'revoked' });
    });

    it('not_found: a well-formed key that is not stored', async () => {
      for (const key of [`svc_pro_${hex64('0')}`, `svc_biz_${hex64('a')}`, `svc_msp_${hex64('f')}`]) {
        expect(await validate(key)).toEqual(unknownResult('not_found', clock.now().toISOString()));
      }
    });

    it('not_found: the 14-character prefix of a stored key with a different rest', async () => {
      const { key } = await createLicense(portal, { tier: 'msp' });
      const last = key.at(-1) === '0' ? '1' : '0';
      const variants = [
        key.slice(0, -1) + last, // differs in the last character only
        key.slice(0, 14) + hex64('0').slice(0, 64 - 6), // same prefix, rest zeros
      ];
      for (const v of variants) {
        expect(v).toMatch(/^svc_msp_[0-9a-f]{64}$/);
        expect(v.slice(0, 14)).toBe(key.slice(0, 14));
        expect(await validate(v)).toEqual(unknownResult('not_found', clock.now().toISOString()));
      }
      // The same secret under another tier segment is another key.
      expect(await validate(key.replace('svc_msp_', 'svc_pro_'))).toEqual(
        unknownResult('not_found', clock.now().toISOString()),
      );
      // The real key is still fine (no negative result was cached for it).
      expect((await validate(key)).reason).toBe('ok');
    });

    it('not_found: a deleted key, at once', async () => {
      const { key, record } = await createLicense(portal);
      await licenseAction(portal, record.id, 'revoke');
      expect((await validate(key)).reason).toBe('revoked');
      const del = await http(portal.url, 'DELETE', `/api/licenses?id=${record.id}`, {
        headers: withToken(await portal.adminToken()),
      });
      expect(del.status).toBe(200);
      expect(await validate(key)).toEqual(unknownResult('not_found', clock.now().toISOString()));
    });

    it('invalid_format: anything that is neither svc_{pro|biz|msp}_<64 lowercase hex> nor the legacy key', async () => {
      const { key } = await createLicense(portal, { tier: 'business' });
      const bad = [
        'abc',
        'svc_',
        `svc_pro_${hex64('0').slice(1)}`, // 63 hex
        `svc_pro_${hex64('0')}0`, // 65 hex
        `svc_pro_${hex64('A')}`, // upper-case hex
        `svc_gold_${hex64('0')}`,
        `SVC_PRO_${hex64('0')}`,
        `svc-pro-${hex64('0')}`,
        `svc_pro_${hex64('g')}`,
        key.toUpperCase(),
        `${key}x`,
        `x${key}`,
        key.slice(0, 14),
        LEGACY_KEY.toUpperCase(),
        `${LEGACY_KEY}0`,
      ];
      for (const k of bad)
        expect(await validate(k), k).toEqual(unknownResult('invalid_format', clock.now().toISOString()));
    });
  });

  describe('401 only for a missing header', () => {
    it('no x-api-key, or an empty one: 401', async () => {
      const variants: Record<string, string>[] = [{}, { 'x-api-key': '' }, { 'x-api-key': '   ' }];
      for (const headers of variants) {
        const res = await http(portal.url, 'GET', '/api/license', { headers });
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ error: 'Missing x-api-key header' });
      }
    });

    it('an admin JWT is not a license key: still 401', async () => {
      const res = await http(portal.url, 'GET', '/api/license', { headers: withToken(await portal.adminToken()) });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'Missing x-api-key header' });
    });
  });

  describe('no side effects', () => {
    it('leaves licenses and audit_events exactly as they were after many calls of every kind', async () => {
      const expiresAt = new Date(clock.now().getTime() + DAY_MS).toISOString();
      const ok = await createLicense(portal, { tier: 'msp' });
      const revoked = await createLicense(portal);
      const inactive = await createLicense(portal);
      const expiring = await createLicense(portal, { expires_at: expiresAt });
      await licenseAction(portal, revoked.record.id, 'revoke');
      await licenseAction(portal, inactive.record.id, 'deactivate');
      clock.advance(2 * DAY_MS);

      const snapshot = async () => ({
        licenses: (await db.query('SELECT * FROM licenses ORDER BY id')).rows,
        audit: (await db.query('SELECT * FROM audit_events ORDER BY id')).rows,
      });
      const before = await snapshot();
      const keys = [ok.key, revoked.key, inactive.key, expiring.key, LEGACY_KEY, `svc_pro_${hex64('1')}`, 'nonsense'];
      const reasons: string[] = [];
      for (let round = 0; round < 8; round++) {
        const results = await Promise.all(keys.map((k) => validate(k)));
        reasons.push(...results.map((r) => r.reason));
      }
      expect(reasons.slice(0, 7)).toEqual([
        'ok',
        'revoked',
        'inactive',
        'expired',
        'ok',
        'not_found',
        'invalid_format',
      ]);
      expect(new Set(reasons).size).toBe(6);
      expect(await snapshot()).toEqual(before);
    });
  });
});
