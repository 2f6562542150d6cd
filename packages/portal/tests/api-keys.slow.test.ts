import crypto, { createHash } from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { PERMISSIONS, type Permission } from '@svc/protocol';
import { ApiKeyVerifier, authorizeKey, KEY_MESSAGES, validationResult, type KeyLookup } from '../src/auth/api-keys.ts';
import { keyHolderOf, requireKey } from '../src/auth/guards.ts';
import { errorHandler } from '../src/http/errors.ts';
import type { Database } from '../src/db/schema.ts';
import type { LicenseRow } from '../src/licenses/present.ts';
import { createLicense, DAY_MS, FakeClock, licenseAction, type LicenseFixture } from '@svc/test-support/factories';
import { http, withToken } from '@svc/test-support/http';
import { LEGACY_KEY, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { usePortalWithDb } from '@svc/test-support/portal-db';

/**
 * The x-api-key checks (docs/api.md#credentials).
 * No endpoint uses requireKey yet, so a small Fastify app reuses the real portal's context
 * and error handler and guards its routes with it.
 */

const sha256 = (s: string) => createHash('sha256').update(s).digest();
const ALL = [...PERMISSIONS].sort();

describe('requireKey', () => {
  const clock = new FakeClock();
  let portal: TestPortal;
  let app: FastifyInstance;
  let handlerRuns = 0;

  const principalOf = (request: FastifyRequest) => {
    handlerRuns++;
    const p = keyHolderOf(request);
    return {
      kind: p.kind,
      tier: p.tier,
      client_id: p.clientId,
      license_id: p.kind === 'license' ? p.license.id : null,
      permissions: [...p.permissions].sort(),
    };
  };

  beforeAll(async () => {
    portal = await startTestPortal({ now: clock.now });
    app = Fastify();
    app.decorateRequest('principal', null);
    app.setErrorHandler(errorHandler);
    const guarded = (path: string, permission: Permission) =>
      app.get(path, { onRequest: requireKey(portal.ctx, { permission }) }, async (req) => principalOf(req));
    guarded('/upload', 'upload');
    guarded('/benchmark', 'benchmark');
    guarded('/agent-commands', 'agent:commands');
    guarded('/audit', 'audit');
    // As a preHandler too: the guard works in either hook.
    app.get('/db-health', { preHandler: requireKey(portal.ctx, { permission: 'db:health' }) }, async (req) =>
      principalOf(req),
    );
    app.put('/refresh', { onRequest: requireKey(portal.ctx, { failStatus: 401 }) }, async (req) => principalOf(req));
    app.get('/any', { onRequest: requireKey(portal.ctx) }, async (req) => principalOf(req));
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    await portal?.close();
  });
  beforeEach(() => {
    clock.set(new Date(Math.floor(Date.now() / 1000) * 1000));
    handlerRuns = 0;
  });

  const call = (method: 'GET' | 'PUT', url: string, headers: Record<string, string>) =>
    app.inject({ method, url, headers });

  async function expectRefused(url: string, headers: Record<string, string>, status: number, error: string) {
    const res = await call(url === '/refresh' ? 'PUT' : 'GET', url, headers);
    expect(res.statusCode, `${url} ${JSON.stringify(headers)}`).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json(), url).toEqual({ error });
  }

  it('uses the exact documented messages', () => {
    expect(KEY_MESSAGES).toEqual({
      missing: 'Missing API key',
      invalid: 'Invalid API key',
      inactive: 'License key is inactive',
      revoked: 'License key has been revoked',
      expired: 'License key has expired',
    });
  });

  describe('failures: 403 by default, 401 with failStatus 401, and the handler never runs', () => {
    let good: LicenseFixture;
    beforeAll(async () => {
      good = await createLicense(portal, { tier: 'msp' });
    });

    const routes: [string, number][] = [
      ['/upload', 403],
      ['/any', 403],
      ['/db-health', 403],
      ['/refresh', 401],
    ];

    it('missing key', async () => {
      for (const [url, status] of routes) {
        await expectRefused(url, {}, status, 'Missing API key');
        await expectRefused(url, { 'x-api-key': '' }, status, 'Missing API key');
        await expectRefused(url, { 'x-api-key': '   ' }, status, 'Missing API key');
      }
      expect(handlerRuns).toBe(0);
    });

    it('unknown key, wrong format, or a stored prefix with a different rest: Invalid API key', async () => {
      const wrongRest = good.key.slice(0, -4) + (good.key.endsWith('0000') ? '1111' : '0000');
      const keys = [
        'nonsense',
        `svc_pro_${'0'.repeat(64)}`,
        `svc_msp_${'a'.repeat(64)}`,
        wrongRest,
        good.key.toUpperCase(),
        `${good.key} `.repeat(2),
        LEGACY_KEY.slice(1),
      ];
      for (const [url, status] of routes)
        for (const key of keys) await expectRefused(url, { 'x-api-key': key }, status, 'Invalid API key');
      expect(handlerRuns).toBe(0);
    });

    it('inactive, revoked, expired keys; revoked wins over expired; a deleted key is unknown', async () => {
      const expiresAt = new Date(clock.now().getTime() + DAY_MS).toISOString();
      const inactive = await createLicense(portal, { tier: 'msp' });
      const revoked = await createLicense(portal, { tier: 'msp' });
      const expiring = await createLicense(portal, { tier: 'msp', expires_at: expiresAt });
      const revokedExpiring = await createLicense(portal, { tier: 'msp', expires_at: expiresAt });
      const deleted = await createLicense(portal, { tier: 'msp' });
      const revokedPro = await createLicense(portal, { tier: 'professional' });

      // All five work before anything happens to them (and are now in the lookup cache).
      for (const k of [inactive, revoked, expiring, revokedExpiring, deleted])
        expect((await call('GET', '/any', { 'x-api-key': k.key })).statusCode).toBe(200);
      expect(handlerRuns).toBe(5);
      handlerRuns = 0;

      await licenseAction(portal, inactive.record.id, 'deactivate');
      await licenseAction(portal, revoked.record.id, 'revoke');
      await licenseAction(portal, revokedExpiring.record.id, 'revoke');
      await licenseAction(portal, deleted.record.id, 'revoke');
      await licenseAction(portal, revokedPro.record.id, 'revoke');
      const del = await http(portal.url, 'DELETE', `/api/licenses?id=${deleted.record.id}`, {
        headers: withToken(await portal.adminToken()),
      });
      expect(del.status).toBe(200);

      for (const [url, status] of routes) {
        await expectRefused(url, { 'x-api-key': inactive.key }, status, 'License key is inactive');
        await expectRefused(url, { 'x-api-key': revoked.key }, status, 'License key has been revoked');
        await expectRefused(url, { 'x-api-key': deleted.key }, status, 'Invalid API key');
      }
      // Expiry follows the portal's clock, also for a key read from the cache.
      expect((await call('GET', '/any', { 'x-api-key': expiring.key })).statusCode).toBe(200);
      handlerRuns = 0;
      clock.set(new Date(expiresAt));
      for (const [url, status] of routes) {
        await expectRefused(url, { 'x-api-key': expiring.key }, status, 'License key has expired');
        await expectRefused(url, { 'x-api-key': revokedExpiring.key }, status, 'License key has been revoked');
      }
      // A failing key is refused before its permissions are looked at.
      await expectRefused('/audit', { 'x-api-key': revokedPro.key }, 403, 'License key has been revoked');
      await expectRefused('/agent-commands', { 'x-api-key': revokedPro.key }, 403, 'License key has been revoked');
      expect(handlerRuns).toBe(0);

      // Re-activation works at once. (Back to the day before: the admin token is checked
      // against the portal's clock too, and a day later it has expired.)
      clock.set(new Date(Date.parse(expiresAt) - DAY_MS));
      await licenseAction(portal, inactive.record.id, 'activate');
      expect((await call('GET', '/any', { 'x-api-key': inactive.key })).statusCode).toBe(200);
    });

    it('an Authorization header is refused with the plain 401 even beside a valid key', async () => {
      for (const url of ['/upload', '/any', '/refresh', '/db-health']) {
        for (const authorization of ['Bearer x', 'Basic YWRtaW46YWRtaW4=', 'garbage']) {
          const res = await call(url === '/refresh' ? 'PUT' : 'GET', url, { 'x-api-key': good.key, authorization });
          expect(res.statusCode).toBe(401);
          expect(res.body).toBe('{"error":"Unauthorized"}');
        }
      }
      expect(handlerRuns).toBe(0);
    });
  });

  describe('permissions by tier', () => {
    let keys: Record<'professional' | 'business' | 'msp', LicenseFixture>;
    beforeAll(async () => {
      keys = {
        professional: await createLicense(portal, { tier: 'professional', client_id: 'tier-pro' }),
        business: await createLicense(portal, { tier: 'business', client_id: 'tier-biz' }),
        msp: await createLicense(portal, { tier: 'msp', client_id: 'tier-msp' }),
      };
    });

    const matrix: [string, Permission, Record<'professional' | 'business' | 'msp', boolean>][] = [
      ['/upload', 'upload', { professional: true, business: true, msp: true }],
      ['/benchmark', 'benchmark', { professional: false, business: true, msp: true }],
      ['/agent-commands', 'agent:commands', { professional: false, business: true, msp: true }],
      ['/audit', 'audit', { professional: false, business: false, msp: true }],
      ['/db-health', 'db:health', { professional: false, business: false, msp: true }],
    ];
    for (const [url, permission, allowed] of matrix) {
      for (const tier of ['professional', 'business', 'msp'] as const) {
        it(`${tier} key on a route needing ${permission}: ${allowed[tier] ? '200' : `403 Insufficient permissions for ${permission}`}`, async () => {
          const res = await call('GET', url, { 'x-api-key': keys[tier].key });
          if (allowed[tier]) {
            expect(res.statusCode).toBe(200);
            expect(res.json()).toMatchObject({
              kind: 'license',
              tier,
              client_id: keys[tier].record.client_id,
              license_id: keys[tier].record.id,
            });
          } else {
            expect(res.statusCode).toBe(403);
            expect(res.json()).toEqual({ error: `Insufficient permissions for ${permission}` });
            expect(handlerRuns).toBe(0);
          }
        });
      }
    }

    it("the principal carries the client id of the key and exactly its tier's permissions", async () => {
      const res = await call('PUT', '/refresh', { 'x-api-key': keys.business.key });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        kind: 'license',
        tier: 'business',
        client_id: 'tier-biz',
        license_id: keys.business.record.id,
        permissions: [
          'agent:commands',
          'benchmark',
          'compliance',
          'download',
          'remediation:update',
          'sessions:read',
          'update:status',
          'upload',
          'webhooks',
        ],
      });
    });

    it('the legacy shared key: tier msp, every permission, no client', async () => {
      for (const url of ['/upload', '/benchmark', '/agent-commands', '/audit', '/db-health', '/any']) {
        const res = await call('GET', url, { 'x-api-key': LEGACY_KEY });
        expect(res.statusCode, url).toBe(200);
        expect(res.json()).toEqual({
          kind: 'legacy',
          tier: 'msp',
          client_id: null,
          license_id: null,
          permissions: ALL,
        });
      }
      const refresh = await call('PUT', '/refresh', { 'x-api-key': LEGACY_KEY });
      expect(refresh.statusCode).toBe(200);
    });
  });
});

describe('ApiKeyVerifier', () => {
  let portal: TestPortal;
  let db: pg.Client;
  let spy: MockInstance<typeof crypto.timingSafeEqual>;

  usePortalWithDb((p) => {
    ({ portal, db } = p);
  });
  beforeEach(() => {
    // api-keys.ts imports { timingSafeEqual } from node:crypto. Node keeps a builtin's ESM
    // named exports in step with its CommonJS object only when syncBuiltinESMExports() runs,
    // so spy on the object and sync; afterEach restores and syncs back.
    spy = vi.spyOn(crypto, 'timingSafeEqual');
    syncBuiltinESMExports();
  });
  afterEach(() => {
    spy.mockRestore();
    syncBuiltinESMExports();
    vi.useRealTimers();
  });

  const calls = () =>
    spy.mock.calls.map(([a, b]) => [
      Buffer.from(a as Uint8Array).toString('hex'),
      Buffer.from(b as Uint8Array).toString('hex'),
    ]);

  it('the spy sees the comparisons (sanity check of the instrument)', async () => {
    const { key } = await createLicense(portal);
    spy.mockClear();
    expect((await new ApiKeyVerifier(portal.ctx.db, null).lookup(key)).kind).toBe('license');
    expect(calls()).toEqual([[sha256(key).toString('hex'), sha256(key).toString('hex')]]);
  });

  it('an unknown prefix still costs one constant-time comparison of two 32-byte digests', async () => {
    const verifier = new ApiKeyVerifier(portal.ctx.db, null);
    const key = `svc_biz_${'7'.repeat(64)}`;
    expect(await verifier.lookup(key)).toEqual({ kind: 'not_found' });
    expect(spy).toHaveBeenCalledTimes(1);
    const [a, b] = spy.mock.calls[0]!;
    expect(Buffer.from(a as Uint8Array).equals(sha256(key))).toBe(true);
    expect((b as Uint8Array).length).toBe(32);
    expect(Buffer.from(b as Uint8Array).equals(sha256(key))).toBe(false);
  });

  it('a known prefix with a different rest compares against the stored digest, in constant time', async () => {
    const { key, record } = await createLicense(portal, { tier: 'msp' });
    const stored = (await db.query('SELECT key_hash FROM licenses WHERE id = $1', [record.id])).rows[0]
      .key_hash as string;
    const other = key.slice(0, 14) + 'f'.repeat(64 - 6);
    spy.mockClear();
    expect(await new ApiKeyVerifier(portal.ctx.db, null).lookup(other)).toEqual({ kind: 'not_found' });
    expect(calls()).toEqual([[sha256(other).toString('hex'), stored]]);
  });

  it('with a legacy key configured, every lookup also compares against its digest first', async () => {
    const verifier = new ApiKeyVerifier(portal.ctx.db, LEGACY_KEY);
    const unknown = `svc_pro_${'3'.repeat(64)}`;
    expect(await verifier.lookup(unknown)).toEqual({ kind: 'not_found' });
    expect(spy).toHaveBeenCalledTimes(2);
    expect(calls()[0]).toEqual([sha256(unknown).toString('hex'), sha256(LEGACY_KEY).toString('hex')]);

    spy.mockClear();
    expect(await verifier.lookup(LEGACY_KEY)).toEqual({ kind: 'legacy' });
    expect(calls()).toEqual([[sha256(LEGACY_KEY).toString('hex'), sha256(LEGACY_KEY).toString('hex')]]);

    spy.mockClear();
    expect(await verifier.lookup('not-a-key')).toEqual({ kind: 'invalid_format' });
    expect(spy).toHaveBeenCalledTimes(1);
  });

  it('caches lookups for 5 s and forgets them on invalidate()', async () => {
    // Only Date is faked, so the cache's clock is under the test's control and no timer is involved.
    vi.useFakeTimers({ toFake: ['Date'] });
    const { key, record } = await createLicense(portal);
    const verifier = new ApiKeyVerifier(portal.ctx.db, null);
    const first = await verifier.lookup(key);
    expect(first.kind === 'license' && first.row.revoked_at).toBeNull();

    // A change made behind the verifier's back (another replica) ...
    await db.query('UPDATE licenses SET revoked_at = now() WHERE id = $1', [record.id]);
    // ... is not seen while the entry is fresh,
    vi.advanceTimersByTime(4_999);
    const cached = await verifier.lookup(key);
    expect(cached.kind === 'license' && cached.row.revoked_at).toBeNull();
    // and is seen once it is 5 s old.
    vi.advanceTimersByTime(1);
    const fresh = await verifier.lookup(key);
    expect(fresh.kind === 'license' && fresh.row.revoked_at).toBeInstanceOf(Date);

    // invalidate() drops entries at once.
    await db.query('UPDATE licenses SET revoked_at = NULL WHERE id = $1', [record.id]);
    expect((await verifier.lookup(key)).kind === 'license').toBe(true);
    const stillCached = await verifier.lookup(key);
    expect(stillCached.kind === 'license' && stillCached.row.revoked_at).toBeInstanceOf(Date);
    verifier.invalidate();
    const afterInvalidate = await verifier.lookup(key);
    expect(afterInvalidate.kind === 'license' && afterInvalidate.row.revoked_at).toBeNull();
  });
});

/**
 * A Kysely whose select queries run, then wait for `gate` before answering; `read` resolves
 * once a query has run. Lets a test change things between a lookup's read and its return.
 */
function gatedDb(db: Kysely<Database>, gate: Promise<void>): { db: Kysely<Database>; read: Promise<void> } {
  let markRead!: () => void;
  const read = new Promise<void>((r) => (markRead = r));
  const wrap = (builder: object): any =>
    new Proxy(builder, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target);
        if (typeof value !== 'function') return value;
        if (prop === 'execute') {
          return async (...args: unknown[]) => {
            const rows = await value.apply(target, args);
            markRead();
            await gate;
            return rows;
          };
        }
        return (...args: unknown[]) => {
          const result = value.apply(target, args);
          return result !== null && typeof result === 'object' && 'execute' in result ? wrap(result) : result;
        };
      },
    });
  const proxy = new Proxy(db, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop === 'selectFrom') return (...args: unknown[]) => wrap(value.apply(target, args));
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { db: proxy, read };
}

describe('ApiKeyVerifier cache and invalidation races', () => {
  let portal: TestPortal;
  let db: pg.Client;
  usePortalWithDb((p) => {
    ({ portal, db } = p);
  });

  it('a lookup that read the key before a revocation does not put the stale row into the cache after invalidate()', async () => {
    const { key, record } = await createLicense(portal);
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const gated = gatedDb(portal.ctx.db, gate);
    const verifier = new ApiKeyVerifier(gated.db, null);

    const inFlight = verifier.lookup(key);
    await gated.read; // The row has been read as active
    await db.query('UPDATE licenses SET revoked_at = now() WHERE id = $1', [record.id]);
    verifier.invalidate(); // what the PATCH route does after its commit
    open();
    const stale = await inFlight;
    expect(stale.kind === 'license' && stale.row.revoked_at).toBeNull(); // that request raced; fine

    // The next lookup must read again and see the revocation.
    const next = await verifier.lookup(key);
    expect(next.kind).toBe('license');
    expect(next.kind === 'license' && next.row.revoked_at).toBeInstanceOf(Date);
    expect(authorizeKey(next, new Date())).toEqual({ ok: false, failure: 'revoked' });
  });

  it('the same race through the API: a revoke while a validation is in flight is seen by the next request', async () => {
    const { key, record } = await createLicense(portal, { tier: 'msp' });
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const gated = gatedDb(portal.ctx.db, gate);
    // Stand in the portal's verifier: same class, gated database.
    const original = portal.ctx.keys;
    portal.ctx.keys = new ApiKeyVerifier(gated.db, LEGACY_KEY);
    try {
      const inFlight = http(portal.url, 'GET', '/api/license', { headers: { 'x-api-key': key } });
      await gated.read;
      await licenseAction(portal, record.id, 'revoke');
      open();
      expect((await inFlight).body.reason).toBe('ok');
      expect((await http(portal.url, 'GET', '/api/license', { headers: { 'x-api-key': key } })).body.reason).toBe(
        'revoked',
      );
    } finally {
      portal.ctx.keys = original;
    }
  });
});

describe('authorizeKey and validationResult (pure)', () => {
  const now = new Date('2026-03-01T12:00:00.000Z');
  const row = (over: Partial<LicenseRow> = {}): LicenseRow => ({
    id: 'lic_0123456789abcdef',
    key_prefix: 'svc_biz_012345',
    key_hash: '0'.repeat(64),
    tier: 'business',
    client_id: 'acme',
    name: 'n',
    description: null,
    max_sessions: 500,
    max_agents: 25,
    expires_at: null,
    is_active: true,
    revoked_at: null,
    created_by: 'admin@test.local',
    created_at: new Date('2026-01-01T00:00:00Z'),
    updated_at: new Date('2026-01-01T00:00:00Z'),
    ...over,
  });

  it('maps each lookup to a principal or the documented failure', () => {
    const cases: [KeyLookup, unknown][] = [
      [{ kind: 'not_found' }, { ok: false, failure: 'invalid' }],
      [{ kind: 'invalid_format' }, { ok: false, failure: 'invalid' }],
      [
        { kind: 'license', row: row({ is_active: false }) },
        { ok: false, failure: 'inactive' },
      ],
      [
        { kind: 'license', row: row({ revoked_at: now }) },
        { ok: false, failure: 'revoked' },
      ],
      [
        { kind: 'license', row: row({ expires_at: now }) },
        { ok: false, failure: 'expired' },
      ],
      [
        { kind: 'license', row: row({ expires_at: new Date(now.getTime() - 1), is_active: false }) },
        { ok: false, failure: 'expired' },
      ],
      [
        { kind: 'license', row: row({ expires_at: new Date(now.getTime() - 1), revoked_at: now }) },
        { ok: false, failure: 'revoked' },
      ],
    ];
    for (const [lookup, expected] of cases) expect(authorizeKey(lookup, now)).toEqual(expected);

    const ok = authorizeKey({ kind: 'license', row: row({ expires_at: new Date(now.getTime() + 1) }) }, now);
    expect(ok.ok).toBe(true);
    if (ok.ok) {
      expect(ok.principal.kind).toBe('license');
      expect(ok.principal.tier).toBe('business');
      expect(ok.principal.clientId).toBe('acme');
      expect([...ok.principal.permissions].sort()).toEqual([
        'agent:commands',
        'benchmark',
        'compliance',
        'download',
        'remediation:update',
        'sessions:read',
        'update:status',
        'upload',
        'webhooks',
      ]);
    }
    const legacy = authorizeKey({ kind: 'legacy' }, now);
    expect(legacy.ok && legacy.principal).toMatchObject({ kind: 'legacy', tier: 'msp', clientId: null });
    expect(legacy.ok && [...legacy.principal.permissions].sort()).toEqual(ALL);
  });

  it('validationResult reports the stored limits and expiry of an expired key', () => {
    const expiresAt = new Date(now.getTime() - DAY_MS);
    expect(validationResult({ kind: 'license', row: row({ expires_at: expiresAt, max_sessions: null }) }, now)).toEqual(
      {
        valid: false,
        tier: 'business',
        client_id: 'acme',
        active: true,
        revoked: false,
        expires_at: expiresAt.toISOString(),
        limits: { max_sessions: null, max_agents: 25 },
        reason: 'expired',
        checked_at: now.toISOString(),
        legacy: false,
      },
    );
  });
});
