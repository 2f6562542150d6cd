import { createHash } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createLicense,
  createScopedUser,
  DAY_MS,
  FakeClock,
  licenseAction,
  uniqueClientId,
  type ScopedUser,
} from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  LEGACY_KEY,
  login,
  startTestPortal,
  type TestPortal,
} from '@svc/test-support/portal';
import { usePortalWithDb } from '@svc/test-support/portal-db';

/** /api/licenses (docs/api.md#licenses). */

const KEY_PATTERN = /^svc_(pro|biz|msp)_[0-9a-f]{64}$/;
const ID_PATTERN = /^lic_[0-9a-f]{16}$/;
const SEGMENT = { professional: 'pro', business: 'biz', msp: 'msp' } as const;
/** Every field the 201 answer carries (the list plus status, created_by, updated_at). */
const CREATED_FIELDS = [
  'client_id',
  'created_at',
  'created_by',
  'description',
  'expires_at',
  'id',
  'is_active',
  'key_prefix',
  'max_agents',
  'max_sessions',
  'name',
  'plaintext_key',
  'revoked_at',
  'status',
  'tier',
  'updated_at',
];
const LISTED_FIELDS = CREATED_FIELDS.filter((f) => f !== 'plaintext_key');

const sha256Hex = (s: string) => createHash('sha256').update(s).digest('hex');

describe('/api/licenses', () => {
  const clock = new FakeClock();
  let portal: TestPortal;
  let admin: string;
  let db: pg.Client;

  usePortalWithDb(
    async (p) => {
      ({ portal, db } = p);
      admin = await portal.adminToken();
    },
    { now: clock.now },
  );
  beforeEach(() => {
    // Each test starts from a fresh, whole-millisecond instant of the fake clock.
    clock.set(new Date(Math.floor(Date.now() / 1000) * 1000));
  });

  const licenseCount = async () => Number((await db.query('SELECT count(*)::int AS n FROM licenses')).rows[0].n);
  const auditRows = async (licenseId: string) =>
    (
      await db.query(
        "SELECT event_type, actor, client_id, session_id, data FROM audit_events WHERE data->>'license_id' = $1 ORDER BY id",
        [licenseId],
      )
    ).rows;

  describe('POST creates a key', () => {
    const defaults = [
      ['professional', 50, 5],
      ['business', 500, 25],
      ['msp', null, null],
    ] as const;

    for (const [tier, maxSessions, maxAgents] of defaults) {
      it(`${tier}: 201 with the record, the tier's default limits and the plaintext key`, async () => {
        const clientId = uniqueClientId();
        const res = await http(portal.url, 'POST', '/api/licenses', {
          headers: withToken(admin),
          json: { tier, client_id: clientId, name: `${tier} key` },
        });
        expect(res.status).toBe(201);
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        expect(Object.keys(res.body)).toEqual(['license']);
        const lic = res.body.license;
        expect(Object.keys(lic).sort()).toEqual(CREATED_FIELDS);
        expect(lic.id).toMatch(ID_PATTERN);
        expect(lic.plaintext_key).toMatch(KEY_PATTERN);
        expect(lic.plaintext_key.startsWith(`svc_${SEGMENT[tier]}_`)).toBe(true);
        expect(lic.key_prefix).toBe(lic.plaintext_key.slice(0, 14));
        expect(lic.key_prefix).toHaveLength(14);
        const now = clock.now().toISOString();
        expect({ ...lic, id: 'x', plaintext_key: 'x', key_prefix: 'x' }).toEqual({
          id: 'x',
          key_prefix: 'x',
          plaintext_key: 'x',
          tier,
          client_id: clientId,
          name: `${tier} key`,
          description: null,
          max_sessions: maxSessions,
          max_agents: maxAgents,
          expires_at: null,
          is_active: true,
          revoked_at: null,
          status: 'active',
          created_by: ADMIN_EMAIL,
          created_at: now,
          updated_at: now,
        });
      });
    }

    it('takes explicit limits, description and expiry; explicit null means unlimited', async () => {
      const expiresAt = new Date(clock.now().getTime() + 30 * DAY_MS).toISOString();
      const a = await createLicense(portal, {
        tier: 'professional',
        max_sessions: 7,
        max_agents: 2,
        description: 'seven sessions',
        expires_at: expiresAt,
      });
      expect(a.record).toMatchObject({
        tier: 'professional',
        max_sessions: 7,
        max_agents: 2,
        description: 'seven sessions',
        expires_at: expiresAt,
        status: 'active',
      });

      const b = await createLicense(portal, { tier: 'business', max_sessions: null, max_agents: null });
      expect(b.record).toMatchObject({ tier: 'business', max_sessions: null, max_agents: null });

      // One given, one omitted: the omitted one still takes the tier default.
      const c = await createLicense(portal, { tier: 'business', max_sessions: null });
      expect(c.record).toMatchObject({ max_sessions: null, max_agents: 25 });
      const d = await createLicense(portal, { tier: 'msp', max_agents: 3 });
      expect(d.record).toMatchObject({ max_sessions: null, max_agents: 3 });

      // An offset is normalised to UTC.
      const f = await createLicense(portal, { expires_at: '2099-06-01T12:00:00+02:00' });
      expect(f.record.expires_at).toBe('2099-06-01T10:00:00.000Z');

      // An explicit expires_at: null is "no expiry" too.
      const e = await createLicense(portal, { tier: 'msp', expires_at: null, description: null });
      expect(e.record).toMatchObject({ expires_at: null, description: null });

      const stored = (
        await db.query(
          'SELECT id, max_sessions, max_agents, expires_at, description FROM licenses WHERE id = ANY($1) ORDER BY id',
          [[a.record.id, b.record.id, c.record.id]],
        )
      ).rows;
      const byId = Object.fromEntries(stored.map((r) => [r.id, r]));
      expect(byId[a.record.id]).toEqual({
        id: a.record.id,
        max_sessions: 7,
        max_agents: 2,
        expires_at: new Date(expiresAt),
        description: 'seven sessions',
      });
      expect(byId[b.record.id]).toEqual({
        id: b.record.id,
        max_sessions: null,
        max_agents: null,
        expires_at: null,
        description: null,
      });
      expect(byId[c.record.id]).toEqual({
        id: c.record.id,
        max_sessions: null,
        max_agents: 25,
        expires_at: null,
        description: null,
      });
    });

    it('generates a different key, prefix and id every time', async () => {
      const keys = await Promise.all(Array.from({ length: 5 }, () => createLicense(portal, { tier: 'msp' })));
      expect(new Set(keys.map((k) => k.key)).size).toBe(5);
      expect(new Set(keys.map((k) => k.record.id)).size).toBe(5);
      expect(new Set(keys.map((k) => k.record.key_prefix)).size).toBe(5);
    });

    it('stores only the SHA-256 hex of the key, never the plaintext', async () => {
      const { key, record } = await createLicense(portal, { tier: 'business', description: 'storage check' });
      const { rows } = await db.query('SELECT * FROM licenses WHERE id = $1', [record.id]);
      expect(rows).toHaveLength(1);
      const row = rows[0];
      expect(row.key_hash).toBe(sha256Hex(key));
      expect(row.key_prefix).toBe(key.slice(0, 14));
      expect(row.tier).toBe('business');
      expect(row.created_by).toBe(ADMIN_EMAIL);
      // No column holds the key or its secret part, in any form.
      const secret = key.slice(8);
      for (const [column, value] of Object.entries(row)) {
        const text = value instanceof Date ? value.toISOString() : String(value);
        expect(text.includes(secret), `column ${column}`).toBe(false);
      }
      // Nor does any other row of the database we can see.
      const everything = await db.query(`SELECT
        (SELECT coalesce(string_agg(l::text, ''), '') FROM licenses l) ||
        (SELECT coalesce(string_agg(a::text, ''), '') FROM audit_events a) AS dump`);
      expect(everything.rows[0].dump.includes(secret)).toBe(false);
    });
  });

  describe('POST validation', () => {
    const base = { tier: 'business', client_id: 'acme', name: 'a key' };
    const cases: [string, unknown, string][] = [
      ['an unknown tier', { ...base, tier: 'gold' }, 'Invalid body: tier must be equal to constant'],
      ['a tier given by its key segment', { ...base, tier: 'biz' }, 'Invalid body: tier must be equal to constant'],
      ['a missing tier', { client_id: 'acme', name: 'n' }, 'Invalid body: missing required field tier'],
      ['a missing client_id', { tier: 'msp', name: 'n' }, 'Invalid body: missing required field client_id'],
      ['a missing name', { tier: 'msp', client_id: 'acme' }, 'Invalid body: missing required field name'],
      ['an empty name', { ...base, name: '' }, 'Invalid body: name must NOT have fewer than 1 characters'],
      [
        'an unknown field',
        { ...base, plaintext_key: 'svc_pro_' + '0'.repeat(64) },
        'Invalid body: body must NOT have additional properties (plaintext_key)',
      ],
      [
        'a client_id with spaces',
        { ...base, client_id: 'bad client' },
        'Invalid body: client_id must match pattern "^[A-Za-z0-9][A-Za-z0-9_.:@-]*$"',
      ],
      ['max_sessions 0', { ...base, max_sessions: 0 }, 'Invalid body: max_sessions must be a positive integer or null'],
      ['max_agents 0', { ...base, max_agents: 0 }, 'Invalid body: max_agents must be a positive integer or null'],
      [
        'a negative max_agents',
        { ...base, max_agents: -1 },
        'Invalid body: max_agents must be a positive integer or null',
      ],
      [
        'a fractional max_sessions',
        { ...base, max_sessions: 1.5 },
        'Invalid body: max_sessions must be a positive integer or null',
      ],
      [
        'max_sessions above 1e9',
        { ...base, max_sessions: 1_000_000_001 },
        'Invalid body: max_sessions must be a positive integer or null',
      ],
      [
        'a description of 2001 characters',
        { ...base, description: 'x'.repeat(2001) },
        'Invalid body: description must NOT have more than 2000 characters',
      ],
      [
        'max_sessions false',
        { ...base, max_sessions: false },
        'Invalid body: max_sessions must be a positive integer or null',
      ],
      [
        'max_sessions ""',
        { ...base, max_sessions: '' },
        'Invalid body: max_sessions must be a positive integer or null',
      ],
      [
        'max_agents as a string',
        { ...base, max_agents: '5' },
        'Invalid body: max_agents must be a positive integer or null',
      ],
      ['max_agents true', { ...base, max_agents: true }, 'Invalid body: max_agents must be a positive integer or null'],
      [
        'expires_at without a time',
        { ...base, expires_at: '2099-01-01' },
        'Invalid body: expires_at must match format "date-time"',
      ],
      ['expires_at ""', { ...base, expires_at: '' }, 'Invalid body: expires_at must match format "date-time"'],
      ['expires_at 0', { ...base, expires_at: 0 }, 'Invalid body: expires_at must be string or null'],
      [
        'a leap-second expires_at',
        { ...base, expires_at: '2099-12-31T23:59:60Z' },
        'Invalid body: expires_at is not a valid date',
      ],
      [
        'expires_at with an hour of 24',
        { ...base, expires_at: '2099-01-01T24:00:00Z' },
        'Invalid body: expires_at must match format "date-time"',
      ],
      ['expires_at in the past', { ...base, expires_at: '2000-01-01T00:00:00Z' }, 'expires_at must be in the future'],
      ['a JSON array body', [base], 'Invalid body: body must be object'],
    ];
    for (const [what, body, message] of cases) {
      it(`refuses ${what} with 400 and creates nothing`, async () => {
        const before = await licenseCount();
        const res = await http(portal.url, 'POST', '/api/licenses', { headers: withToken(admin), json: body });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error: message });
        expect(await licenseCount()).toBe(before);
      });
    }

    it('refuses expires_at equal to now (it would be born expired)', async () => {
      const res = await http(portal.url, 'POST', '/api/licenses', {
        headers: withToken(admin),
        json: { ...base, expires_at: clock.now().toISOString() },
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'expires_at must be in the future' });
    });

    it('accepts expires_at one millisecond after now', async () => {
      const at = new Date(clock.now().getTime() + 1).toISOString();
      const { record } = await createLicense(portal, { expires_at: at });
      expect(record.expires_at).toBe(at);
      expect(record.status).toBe('active');
    });

    it('refuses a body that is not JSON, and no body at all', async () => {
      const bad = await http(portal.url, 'POST', '/api/licenses', {
        headers: { ...withToken(admin), 'content-type': 'application/json' },
        body: '{"tier":',
      });
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ error: 'Request body is not valid JSON' });
      const none = await http(portal.url, 'POST', '/api/licenses', { headers: withToken(admin) });
      expect(none.status).toBe(400);
      expect(none.body).toEqual({ error: 'Invalid body: body must be object' });
    });
  });

  describe('GET lists keys', () => {
    it('never shows the plaintext key or its hash', async () => {
      const clientId = uniqueClientId('list');
      const one = await createLicense(portal, { tier: 'professional', client_id: clientId, name: 'first' });
      clock.advance(1000);
      const two = await createLicense(portal, {
        tier: 'msp',
        client_id: clientId,
        name: 'second',
        description: 'newer',
      });

      const res = await http(portal.url, 'GET', `/api/licenses?client_id=${clientId}`, { headers: withToken(admin) });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['licenses']);
      expect(res.body.licenses).toHaveLength(2);
      // Newest first, each exactly the creation record without the plaintext.
      const { plaintext_key: _k2, ...twoListed } = two.record;
      const { plaintext_key: _k1, ...oneListed } = one.record;
      expect(res.body.licenses).toEqual([twoListed, oneListed]);
      for (const l of res.body.licenses) expect(Object.keys(l).sort()).toEqual(LISTED_FIELDS);
      for (const { key } of [one, two]) {
        expect(res.text.includes(key.slice(14))).toBe(false);
        expect(res.text.includes(sha256Hex(key))).toBe(false);
      }

      // The unfiltered list has the same guarantee.
      const all = await http(portal.url, 'GET', '/api/licenses', { headers: withToken(admin) });
      expect(all.status).toBe(200);
      expect(all.text.includes('plaintext_key')).toBe(false);
      expect(all.text.includes('key_hash')).toBe(false);
      expect(all.body.licenses.map((l: any) => l.id)).toEqual(expect.arrayContaining([one.record.id, two.record.id]));
    });

    it('filters by status, including expired as the clock passes expires_at', async () => {
      const clientId = uniqueClientId('status');
      const active = await createLicense(portal, { client_id: clientId, name: 'active' });
      const inactive = await createLicense(portal, { client_id: clientId, name: 'inactive' });
      const revoked = await createLicense(portal, { client_id: clientId, name: 'revoked' });
      const expiring = await createLicense(portal, {
        client_id: clientId,
        name: 'expiring',
        expires_at: new Date(clock.now().getTime() + DAY_MS).toISOString(),
      });
      await licenseAction(portal, inactive.record.id, 'deactivate');
      await licenseAction(portal, revoked.record.id, 'revoke');

      const ids = async (status: string) =>
        (
          await http(portal.url, 'GET', `/api/licenses?client_id=${clientId}&status=${status}`, {
            headers: withToken(admin),
          })
        ).body.licenses
          .map((l: any) => l.id)
          .sort();
      expect(await ids('active')).toEqual([active.record.id, expiring.record.id].sort());
      expect(await ids('inactive')).toEqual([inactive.record.id]);
      expect(await ids('revoked')).toEqual([revoked.record.id]);
      expect(await ids('expired')).toEqual([]);

      clock.advance(DAY_MS);
      // Tokens are checked against the portal's clock: a day later the admin signs in again.
      const later = await login(portal.url, ADMIN_EMAIL, ADMIN_PASSWORD);
      const idsLater = async (status: string) =>
        (
          await http(portal.url, 'GET', `/api/licenses?client_id=${clientId}&status=${status}`, {
            headers: withToken(later),
          })
        ).body.licenses
          .map((l: any) => l.id)
          .sort();
      expect(await idsLater('active')).toEqual([active.record.id]);
      expect(await idsLater('expired')).toEqual([expiring.record.id]);
      const listed = (
        await http(portal.url, 'GET', `/api/licenses?client_id=${clientId}&status=expired`, {
          headers: withToken(later),
        })
      ).body.licenses[0];
      expect(listed).toMatchObject({ status: 'expired', is_active: true, revoked_at: null });
    });

    it('refuses an unknown status or query field with 400', async () => {
      const status = await http(portal.url, 'GET', '/api/licenses?status=bogus', { headers: withToken(admin) });
      expect(status.status).toBe(400);
      expect(status.body).toEqual({ error: 'Invalid query: status must be equal to constant' });
      const field = await http(portal.url, 'GET', '/api/licenses?tier=msp', { headers: withToken(admin) });
      expect(field.status).toBe(400);
      expect(field.body).toEqual({ error: 'Invalid query: querystring must NOT have additional properties (tier)' });
    });
  });

  describe('PATCH changes state', () => {
    const patch = (id: string, body: unknown, token = admin) =>
      http(portal.url, 'PATCH', `/api/licenses?id=${encodeURIComponent(id)}`, {
        headers: withToken(token),
        json: body,
      });

    it('deactivate and activate move between Active and Inactive; repeating one is a 409', async () => {
      const { record } = await createLicense(portal, { tier: 'business' });

      clock.advance(5000);
      const off = await patch(record.id, { action: 'deactivate' });
      expect(off.status).toBe(200);
      expect(Object.keys(off.body)).toEqual(['license']);
      const { plaintext_key: _k, ...listed } = record;
      expect(off.body.license).toEqual({
        ...listed,
        is_active: false,
        status: 'inactive',
        updated_at: clock.now().toISOString(),
      });

      const again = await patch(record.id, { action: 'deactivate' });
      expect(again.status).toBe(409);
      expect(again.body).toEqual({ error: 'License key is already inactive' });

      clock.advance(5000);
      const on = await patch(record.id, { action: 'activate' });
      expect(on.status).toBe(200);
      expect(on.body.license).toEqual({
        ...listed,
        is_active: true,
        status: 'active',
        updated_at: clock.now().toISOString(),
      });

      const onAgain = await patch(record.id, { action: 'activate' });
      expect(onAgain.status).toBe(409);
      expect(onAgain.body).toEqual({ error: 'License key is already active' });

      const row = (await db.query('SELECT is_active, revoked_at FROM licenses WHERE id = $1', [record.id])).rows[0];
      expect(row).toEqual({ is_active: true, revoked_at: null });
    });

    it('revoke is one-way: every later action on the key is a 409', async () => {
      const { record } = await createLicense(portal, { tier: 'msp' });
      clock.advance(2000);
      const revokedAt = clock.now().toISOString();
      const res = await patch(record.id, { action: 'revoke' });
      expect(res.status).toBe(200);
      const { plaintext_key: _k, ...listed } = record;
      expect(res.body.license).toEqual({ ...listed, revoked_at: revokedAt, status: 'revoked', updated_at: revokedAt });

      for (const action of ['revoke', 'activate', 'deactivate']) {
        clock.advance(1000);
        const r = await patch(record.id, { action });
        expect(r.status, action).toBe(409);
        expect(r.body, action).toEqual({ error: 'License key has been revoked' });
      }
      const row = (await db.query('SELECT is_active, revoked_at, updated_at FROM licenses WHERE id = $1', [record.id]))
        .rows[0];
      expect(row).toEqual({ is_active: true, revoked_at: new Date(revokedAt), updated_at: new Date(revokedAt) });
    });

    it('an inactive key can be revoked, and stays inactive', async () => {
      const { record } = await createLicense(portal);
      await licenseAction(portal, record.id, 'deactivate');
      const res = await patch(record.id, { action: 'revoke' });
      expect(res.status).toBe(200);
      expect(res.body.license).toMatchObject({
        is_active: false,
        revoked_at: clock.now().toISOString(),
        status: 'revoked',
      });
    });

    it('two concurrent revokes: exactly one wins', async () => {
      const { record } = await createLicense(portal);
      const results = await Promise.all([
        patch(record.id, { action: 'revoke' }),
        patch(record.id, { action: 'revoke' }),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
      expect((await auditRows(record.id)).map((r) => r.event_type)).toEqual(['license_created', 'license_revoked']);
    });

    it('answers 404 for an unknown id and 400 for a bad request', async () => {
      const unknown = await patch('lic_0000000000000000', { action: 'revoke' });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ error: 'License not found' });

      const { record } = await createLicense(portal);
      const cases: [string, unknown, string][] = [
        [`/api/licenses`, { action: 'revoke' }, 'Invalid query: missing required field id'],
        [`/api/licenses?id=${record.id}`, { action: 'delete' }, 'Invalid body: action must be equal to constant'],
        [`/api/licenses?id=${record.id}`, {}, 'Invalid body: missing required field action'],
        [
          `/api/licenses?id=${record.id}`,
          { action: 'revoke', is_active: true },
          'Invalid body: body must NOT have additional properties (is_active)',
        ],
        [
          `/api/licenses?id=${record.id}&client_id=x`,
          { action: 'revoke' },
          'Invalid query: querystring must NOT have additional properties (client_id)',
        ],
      ];
      for (const [path, body, message] of cases) {
        const r = await http(portal.url, 'PATCH', path, { headers: withToken(admin), json: body });
        expect(r.status, path).toBe(400);
        expect(r.body, path).toEqual({ error: message });
      }
      const row = (await db.query('SELECT is_active, revoked_at FROM licenses WHERE id = $1', [record.id])).rows[0];
      expect(row).toEqual({ is_active: true, revoked_at: null });
    });
  });

  describe('DELETE', () => {
    const del = (id: string, token = admin) =>
      http(portal.url, 'DELETE', `/api/licenses?id=${encodeURIComponent(id)}`, { headers: withToken(token) });

    it('deletes only a revoked key: 409 while active or inactive, 200 when revoked, then 404', async () => {
      const { record } = await createLicense(portal);

      const active = await del(record.id);
      expect(active.status).toBe(409);
      expect(active.body).toEqual({ error: 'Only a revoked license key can be deleted' });

      await licenseAction(portal, record.id, 'deactivate');
      const inactive = await del(record.id);
      expect(inactive.status).toBe(409);
      expect(inactive.body).toEqual({ error: 'Only a revoked license key can be deleted' });
      expect((await db.query('SELECT count(*)::int AS n FROM licenses WHERE id = $1', [record.id])).rows[0].n).toBe(1);

      await licenseAction(portal, record.id, 'revoke');
      const ok = await del(record.id);
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual({ ok: true, id: record.id });
      expect((await db.query('SELECT count(*)::int AS n FROM licenses WHERE id = $1', [record.id])).rows[0].n).toBe(0);

      const gone = await del(record.id);
      expect(gone.status).toBe(404);
      expect(gone.body).toEqual({ error: 'License not found' });

      const patchGone = await http(portal.url, 'PATCH', `/api/licenses?id=${record.id}`, {
        headers: withToken(admin),
        json: { action: 'activate' },
      });
      expect(patchGone.status).toBe(404);
      expect(patchGone.body).toEqual({ error: 'License not found' });
    });

    it('answers 404 for an unknown id and 400 without an id', async () => {
      const unknown = await del('lic_ffffffffffffffff');
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ error: 'License not found' });
      const missing = await http(portal.url, 'DELETE', '/api/licenses', { headers: withToken(admin) });
      expect(missing.status).toBe(400);
      expect(missing.body).toEqual({ error: 'Invalid query: missing required field id' });
    });
  });

  describe('who may administer keys', () => {
    let member: ScopedUser;
    let memberKey: Awaited<ReturnType<typeof createLicense>>;

    beforeAll(async () => {
      const clientId = uniqueClientId('scoped');
      // Even an msp key for the member's own client does not make it an administrator.
      memberKey = await createLicense(portal, { tier: 'msp', client_id: clientId });
      member = await createScopedUser(portal, [clientId]);
    });

    it('a scoped user gets 403 "Admin access required" on every method and changes nothing', async () => {
      const before = await licenseCount();
      const auditBefore = Number((await db.query('SELECT count(*)::int AS n FROM audit_events')).rows[0].n);
      const id = memberKey.record.id;
      const attempts = [
        http(portal.url, 'GET', '/api/licenses', { headers: withToken(member.token) }),
        http(portal.url, 'POST', '/api/licenses', {
          headers: withToken(member.token),
          json: { tier: 'msp', client_id: member.clientIds[0], name: 'mine' },
        }),
        // An invalid body still gets the 403: authorization is decided before the body is read.
        http(portal.url, 'POST', '/api/licenses', { headers: withToken(member.token), json: { tier: 'gold' } }),
        http(portal.url, 'PATCH', `/api/licenses?id=${id}`, {
          headers: withToken(member.token),
          json: { action: 'revoke' },
        }),
        http(portal.url, 'DELETE', `/api/licenses?id=${id}`, { headers: withToken(member.token) }),
      ];
      for (const res of await Promise.all(attempts)) {
        expect(res.status).toBe(403);
        expect(res.body).toEqual({ error: 'Admin access required' });
      }
      expect(await licenseCount()).toBe(before);
      expect(Number((await db.query('SELECT count(*)::int AS n FROM audit_events')).rows[0].n)).toBe(auditBefore);
      expect((await db.query('SELECT revoked_at FROM licenses WHERE id = $1', [id])).rows[0].revoked_at).toBeNull();
    });

    it('no token, a bad token, or a key instead of a token: 401 {"error":"Unauthorized"} before validation', async () => {
      const before = await licenseCount();
      const headerSets: Record<string, string>[] = [
        {},
        withToken('not-a-jwt'),
        withToken(''),
        withKey(LEGACY_KEY),
        withKey(memberKey.key),
      ];
      for (const headers of headerSets) {
        const attempts = [
          http(portal.url, 'GET', '/api/licenses', { headers }),
          http(portal.url, 'POST', '/api/licenses', { headers, json: { tier: 'msp', client_id: 'x', name: 'y' } }),
          http(portal.url, 'POST', '/api/licenses', { headers, json: { tier: 'gold', bogus: true } }),
          http(portal.url, 'PATCH', `/api/licenses?id=${memberKey.record.id}`, { headers, json: { action: 'revoke' } }),
          http(portal.url, 'PATCH', '/api/licenses', { headers, json: {} }),
          http(portal.url, 'DELETE', `/api/licenses?id=${memberKey.record.id}`, { headers }),
        ];
        for (const res of await Promise.all(attempts)) {
          expect(res.status, JSON.stringify(headers)).toBe(401);
          expect(res.text).toBe('{"error":"Unauthorized"}');
        }
      }
      expect(await licenseCount()).toBe(before);
    });

    it("a deleted admin user's token stops working at once", async () => {
      const second = await createScopedUser(portal, [], { role: 'admin' });
      const ok = await http(portal.url, 'GET', '/api/licenses', { headers: withToken(second.token) });
      expect(ok.status).toBe(200);
      await db.query('DELETE FROM users WHERE id = $1', [second.id]);
      const after = await http(portal.url, 'GET', '/api/licenses', { headers: withToken(second.token) });
      expect(after.status).toBe(401);
      expect(after.body).toEqual({ error: 'Unauthorized' });
    });
  });

  describe('audit trail', () => {
    it('records license_created, _deactivated, _activated, _revoked and _deleted with the admin as actor and no plaintext', async () => {
      const clientId = uniqueClientId('audited');
      const expiresAt = new Date(clock.now().getTime() + 10 * DAY_MS).toISOString();
      const { key, record } = await createLicense(portal, {
        tier: 'business',
        client_id: clientId,
        name: 'audited key',
        max_sessions: 9,
        expires_at: expiresAt,
      });
      await licenseAction(portal, record.id, 'deactivate');
      await licenseAction(portal, record.id, 'activate');
      await licenseAction(portal, record.id, 'revoke');
      const del = await http(portal.url, 'DELETE', `/api/licenses?id=${record.id}`, { headers: withToken(admin) });
      expect(del.status).toBe(200);

      const ref = { license_id: record.id, key_prefix: record.key_prefix, tier: 'business' };
      expect(await auditRows(record.id)).toEqual([
        {
          event_type: 'license_created',
          actor: ADMIN_EMAIL,
          client_id: clientId,
          session_id: null,
          data: { ...ref, name: 'audited key', max_sessions: 9, max_agents: 25, expires_at: expiresAt },
        },
        { event_type: 'license_deactivated', actor: ADMIN_EMAIL, client_id: clientId, session_id: null, data: ref },
        { event_type: 'license_activated', actor: ADMIN_EMAIL, client_id: clientId, session_id: null, data: ref },
        { event_type: 'license_revoked', actor: ADMIN_EMAIL, client_id: clientId, session_id: null, data: ref },
        { event_type: 'license_deleted', actor: ADMIN_EMAIL, client_id: clientId, session_id: null, data: ref },
      ]);
      const dump = (await db.query("SELECT coalesce(string_agg(a::text, ''), '') AS d FROM audit_events a")).rows[0]
        .d as string;
      expect(dump.includes(key.slice(14))).toBe(false);
      expect(dump.includes(sha256Hex(key))).toBe(false);

      // The same events through GET /api/audit.
      const res = await http(portal.url, 'GET', '/api/audit?days=1', { headers: withToken(admin) });
      const mine = res.body.events.filter((e: any) => e.data.license_id === record.id);
      expect(mine.map((e: any) => e.event_type)).toEqual([
        'license_deleted',
        'license_revoked',
        'license_activated',
        'license_deactivated',
        'license_created',
      ]);
      expect(res.text.includes(key.slice(14))).toBe(false);
    });

    it('a refused change records nothing', async () => {
      const { record } = await createLicense(portal);
      await http(portal.url, 'PATCH', `/api/licenses?id=${record.id}`, {
        headers: withToken(admin),
        json: { action: 'activate' },
      });
      await http(portal.url, 'DELETE', `/api/licenses?id=${record.id}`, { headers: withToken(admin) });
      expect((await auditRows(record.id)).map((r) => r.event_type)).toEqual(['license_created']);
    });
  });
});

describe('secrets stay out of the logs ', () => {
  const lines: string[] = [];
  let portal: TestPortal;
  beforeAll(async () => {
    portal = await startTestPortal({
      env: { SVC_LOG_LEVEL: 'trace' },
      logDestination: { write: (s: string) => void lines.push(s) },
    });
  });
  afterAll(async () => {
    await portal?.close();
  });

  it('no plaintext key, key hash or JWT appears in any log line, at trace level', async () => {
    const admin = await portal.adminToken();
    const { key, record } = await createLicense(portal, { tier: 'msp' });
    await http(portal.url, 'GET', '/api/licenses', { headers: withToken(admin) });
    await http(portal.url, 'GET', '/api/license', { headers: withKey(key) });
    await http(portal.url, 'GET', `/api/license?key=${key}`, { headers: withKey(key) });
    await http(portal.url, 'GET', '/api/licenses', { headers: { authorization: `Bearer ${admin}` } });
    await http(portal.url, 'POST', '/api/licenses', {
      headers: withToken(admin),
      json: { tier: 'msp', client_id: 'x', name: 'y', max_sessions: 0 },
    });
    await licenseAction(portal, record.id, 'revoke');
    await http(portal.url, 'GET', '/api/license', { headers: withKey(key) });

    const log = lines.join('');
    expect(lines.length).toBeGreaterThan(10); // The instrument works: requests were logged
    expect(log.includes(record.key_prefix) || log.includes('/api/licenses')).toBe(true);
    expect(log.includes(key.slice(14))).toBe(false);
    expect(log.includes(sha256Hex(key))).toBe(false);
    expect(log.includes(admin.split('.')[2]!)).toBe(false);
    expect(log.includes(admin.split('.')[1]!)).toBe(false);
  });
});
