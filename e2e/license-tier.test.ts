import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLicense, DAY_MS, licenseAction } from '@svc/test-support/factories';
import { LEGACY_KEY, type TestPortal } from '@svc/test-support/portal';
import {
  ConfigError,
  DEFAULT_GRACE_S,
  DEFAULT_TTL_S,
  licenseCacheFile,
  licenseState,
  type LicenseState,
  Settings,
} from '@svc/client/kit';
import { licenseKeyFingerprint as keyFingerprint, licenseKeySha256 as keySha256 } from '@svc/protocol/node';
import { tempHome } from '@svc/test-support/cli';
import { closedPortUrl, startFakePortal, type FakeMode, type FakePortal } from '@svc/test-support/license-fake-portal';
import { usePortalWithKey } from './helpers/portal-with-key.ts';

/**
 * docs/cli.md#license-tier (license TTL and grace), in
 * process with a clock the test sets, against the real portal (through a counting proxy)
 * and a local server that fails the ways a portal can fail.
 */

const TTL_MS = 86_400_000;
const GRACE_MS = 259_200_000;
const HOUR = 3_600_000;

let portal: TestPortal;
let fake: FakePortal;
let home: string;
let warnings: string[];

const fixture = usePortalWithKey();

beforeAll(async () => {
  portal = fixture.portal;
  fake = await startFakePortal(portal.url);
});
afterAll(async () => {
  await fake?.close();
});
beforeEach(async () => {
  home = await tempHome();
  warnings = [];
  fake.mode = 'proxy';
  fake.requests = [];
});
afterEach(async () => {
  await fs.rm(home, { recursive: true, force: true });
});

interface Run {
  key: string;
  at: Date;
  url?: string | null;
  env?: Record<string, string>;
  timeoutS?: number;
}

/** One run's license state: SVC_API_KEY and CONSULTATION_API_URL in the environment, the clock at `at`. */
function run(r: Run): Promise<LicenseState> {
  const env: Record<string, string> = { SVC_API_KEY: r.key, ...r.env };
  const url = r.url === undefined ? fake.uploadUrl : r.url;
  if (url !== null) env['CONSULTATION_API_URL'] = url;
  return licenseState({
    settings: new Settings({ env }),
    home,
    now: () => r.at,
    warn: (m) => void warnings.push(m),
    timeoutS: r.timeoutS ?? 5,
  });
}

const at = (t0: Date, ms: number) => new Date(t0.getTime() + ms);
const summary = (s: LicenseState) => ({ licensed: s.licensed, tier: s.tier, basis: s.basis });
const cacheText = () => fs.readFile(licenseCacheFile(home), 'utf8');
const licenseRequests = () => fake.requests.filter((r) => r.path === '/api/license').length;

describe('defaults', () => {
  it('TTL 86400 s and grace 259200 s', () => {
    expect([DEFAULT_TTL_S, DEFAULT_GRACE_S]).toEqual([86_400, 259_200]);
  });
});

describe('a valid key: the portal decides, the cache remembers', () => {
  for (const tier of ['professional', 'business', 'msp'] as const) {
    it(`${tier}: tier from the portal; cache mode 600 with a 16-hex fingerprint and never the key`, async () => {
      const { key, record } = await createLicense(portal, { tier });
      const t0 = new Date();
      const s = await run({ key, at: t0 });
      expect(s).toEqual({
        licensed: true,
        tier,
        source: 'env:SVC_API_KEY',
        basis: 'online',
        format_tier: tier,
        valid: true,
        reason: 'ok',
        expires_at: null,
        client_id: record.client_id,
        fingerprint: keyFingerprint(key),
        key_sha256: keySha256(key),
        validated_at: t0.toISOString(),
        unreachable: null,
      });
      expect(warnings).toEqual([]);
      expect(fake.requests).toHaveLength(1);
      expect(fake.requests[0]).toMatchObject({ method: 'GET', path: '/api/license', apiKey: key });

      const file = licenseCacheFile(home);
      expect(file).toBe(path.join(home, '.svc', 'license_cache.json'));
      expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
      expect((await fs.stat(path.dirname(file))).mode & 0o777).toBe(0o700);
      const text = await cacheText();
      expect(text).not.toContain(key);
      expect(text).not.toContain(key.slice(8)); // not even the hex part
      const cache = JSON.parse(text);
      expect(cache).toEqual({
        version: 1,
        fingerprint: keyFingerprint(key),
        valid: true,
        tier,
        reason: 'ok',
        client_id: record.client_id,
        expires_at: null,
        validated_at: t0.toISOString(),
        portal_checked_at: expect.any(String),
      });
      expect(cache.fingerprint).toMatch(/^[0-9a-f]{16}$/);
      // Nothing else in ~/.svc (no temp files left behind).
      expect(await fs.readdir(path.join(home, '.svc'))).toEqual(['license_cache.json']);
    });
  }

  it('a fresh cache (age below the TTL) answers without any request', async () => {
    const { key } = await createLicense(portal, { tier: 'business' });
    const t0 = new Date();
    await run({ key, at: t0 });
    expect(licenseRequests()).toBe(1);
    for (const age of [0, 1, HOUR, TTL_MS - 1]) {
      const s = await run({ key, at: at(t0, age) });
      expect(summary(s)).toEqual({ licensed: true, tier: 'business', basis: 'cache' });
      expect(s.validated_at).toBe(t0.toISOString());
    }
    expect(licenseRequests()).toBe(1);
    expect(warnings).toEqual([]);
  });

  it('a stale cache (age at or past the TTL) costs exactly one request, then is fresh again', async () => {
    const { key } = await createLicense(portal, { tier: 'msp' });
    const t0 = new Date();
    await run({ key, at: t0 });
    const t1 = at(t0, TTL_MS);
    const s = await run({ key, at: t1 });
    expect(summary(s)).toEqual({ licensed: true, tier: 'msp', basis: 'online' });
    expect(licenseRequests()).toBe(2);
    expect(JSON.parse(await cacheText()).validated_at).toBe(t1.toISOString());
    expect(summary(await run({ key, at: at(t1, TTL_MS - 1) }))).toEqual({
      licensed: true,
      tier: 'msp',
      basis: 'cache',
    });
    expect(licenseRequests()).toBe(2);
  });

  it('a damaged cache is reported, ignored and rewritten by the next online check', async () => {
    const { key } = await createLicense(portal, { tier: 'business' });
    const file = licenseCacheFile(home);
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, '{"version": 1, "fingerprint": ');
    const s = await run({ key, at: new Date() });
    expect(summary(s)).toEqual({ licensed: true, tier: 'business', basis: 'online' });
    expect(warnings).toEqual([`${file} is damaged; ignoring it (it is rewritten after the next online check)`]);
    expect(JSON.parse(await cacheText())).toMatchObject({ fingerprint: keyFingerprint(key), tier: 'business' });
  });

  it('a cache stamped in the future (the clock went back) is not fresh: asked again', async () => {
    const { key } = await createLicense(portal, { tier: 'business' });
    const t0 = new Date();
    await run({ key, at: t0 });
    const s = await run({ key, at: at(t0, -HOUR) });
    expect(summary(s)).toEqual({ licensed: true, tier: 'business', basis: 'online' });
    expect(licenseRequests()).toBe(2);
  });

  it('one resolution makes at most one request, whatever the portal answers', async () => {
    const { key } = await createLicense(portal, { tier: 'business' });
    for (const mode of ['proxy', 'status500', 'status404', 'garbage'] as const) {
      fake.mode = mode;
      fake.requests = [];
      await fs.rm(path.join(home, '.svc'), { recursive: true, force: true });
      await run({ key, at: new Date() });
      expect(fake.requests.length, mode).toBe(1);
    }
  });
});

describe('valid false is authoritative', () => {
  it('revoked: community with a warning naming the reason; stays community offline long after TTL + grace', async () => {
    const { key, record } = await createLicense(portal, { tier: 'business' });
    const t0 = new Date();
    expect(summary(await run({ key, at: t0 }))).toEqual({ licensed: true, tier: 'business', basis: 'online' });
    await licenseAction(portal, record.id, 'revoke');

    // Still fresh: the cached valid answer stands until the TTL.
    expect(summary(await run({ key, at: at(t0, TTL_MS - 1) }))).toEqual({
      licensed: true,
      tier: 'business',
      basis: 'cache',
    });
    const t1 = at(t0, TTL_MS);
    const s = await run({ key, at: t1 });
    expect(s).toMatchObject({
      licensed: false,
      tier: '',
      basis: 'online',
      valid: false,
      reason: 'revoked',
      format_tier: 'business',
    });
    expect(warnings).toEqual([
      'The portal reports this license key as not valid (reason: revoked); running as community until it is valid again',
    ]);
    expect(JSON.parse(await cacheText())).toMatchObject({
      valid: false,
      tier: '',
      reason: 'revoked',
      validated_at: t1.toISOString(),
    });

    // The portal becomes unreachable in every way: still community, however old the answer.
    for (const [mode, ms] of [
      ['status500', TTL_MS + 1],
      ['status404', TTL_MS + GRACE_MS],
      ['garbage', TTL_MS + GRACE_MS + 1],
      ['status500', 100 * DAY_MS],
    ] as const) {
      fake.mode = mode;
      warnings = [];
      const later = await run({ key, at: at(t1, ms) });
      expect(summary(later), mode).toEqual({ licensed: false, tier: '', basis: 'cache' });
      expect(later.reason).toBe('revoked');
      expect(warnings).toContain(
        'The portal reports this license key as not valid (reason: revoked); running as community until it is valid again',
      );
    }
    const closed = await run({ key, at: at(t1, 30 * DAY_MS), url: await closedPortUrl() });
    expect(summary(closed)).toEqual({ licensed: false, tier: '', basis: 'cache' });
  });

  it('inactive: community (reason inactive) until the portal answers valid true again', async () => {
    const { key, record } = await createLicense(portal, { tier: 'professional' });
    await licenseAction(portal, record.id, 'deactivate');
    const t0 = new Date();
    const s = await run({ key, at: t0 });
    expect(s).toMatchObject({ licensed: false, tier: '', basis: 'online', valid: false, reason: 'inactive' });
    expect(warnings).toEqual([
      'The portal reports this license key as not valid (reason: inactive); running as community until it is valid again',
    ]);

    // Fresh invalid cache: community without asking.
    expect(summary(await run({ key, at: at(t0, HOUR) }))).toEqual({ licensed: false, tier: '', basis: 'cache' });
    expect(licenseRequests()).toBe(1);

    // Stale, portal unreachable, far past TTL + grace: community.
    fake.mode = 'status500';
    expect(summary(await run({ key, at: at(t0, TTL_MS + GRACE_MS + DAY_MS) }))).toEqual({
      licensed: false,
      tier: '',
      basis: 'cache',
    });
    expect(licenseRequests()).toBe(2);

    // Reactivated, but the portal is still unreachable: community.
    await licenseAction(portal, record.id, 'activate');
    expect(summary(await run({ key, at: at(t0, TTL_MS + GRACE_MS + 2 * DAY_MS) }))).toEqual({
      licensed: false,
      tier: '',
      basis: 'cache',
    });

    // The portal answers valid true: the tier is back, and cached as valid.
    fake.mode = 'proxy';
    warnings = [];
    const t2 = at(t0, TTL_MS + GRACE_MS + 3 * DAY_MS);
    const back = await run({ key, at: t2 });
    expect(back).toMatchObject({ licensed: true, tier: 'professional', basis: 'online', valid: true, reason: 'ok' });
    expect(warnings).toEqual([]);
    expect(JSON.parse(await cacheText())).toMatchObject({
      valid: true,
      tier: 'professional',
      reason: 'ok',
      validated_at: t2.toISOString(),
    });
    expect(summary(await run({ key, at: at(t2, HOUR) }))).toEqual({
      licensed: true,
      tier: 'professional',
      basis: 'cache',
    });
  });

  it('a well-formed key the portal does not know: community (reason not_found)', async () => {
    const key = `svc_biz_${'5'.repeat(64)}`;
    const s = await run({ key, at: new Date() });
    expect(s).toMatchObject({
      licensed: false,
      tier: '',
      basis: 'online',
      valid: false,
      reason: 'not_found',
      format_tier: 'business',
    });
    expect(warnings).toEqual([
      'The portal reports this license key as not valid (reason: not_found); running as community until it is valid again',
    ]);
  });

  it("a malformed svc_ key: legacy by format, but the portal's verdict (invalid_format) wins", async () => {
    const key = `svc_ent_${'6'.repeat(64)}`;
    const s = await run({ key, at: new Date() });
    expect(s).toMatchObject({
      licensed: false,
      tier: '',
      basis: 'online',
      valid: false,
      reason: 'invalid_format',
      format_tier: 'legacy',
    });
    expect(warnings).toEqual([
      'The license key does not match svc_{pro|biz|msp}_{64 hex}; treating it as legacy until the portal says otherwise',
      'The portal reports this license key as not valid (reason: invalid_format); running as community until it is valid again',
    ]);
  });
});

describe('the portal cannot tell: cached tier through TTL + grace, then community', () => {
  const failures: [string, FakeMode | 'closed', RegExp][] = [
    ['closed port', 'closed', /Cannot reach http:\/\/127\.0\.0\.1:\d+/],
    ['HTTP 500', 'status500', /the portal answered HTTP 500/],
    ['HTTP 404 (no license endpoint)', 'status404', /the portal answered HTTP 404/],
    ['a body that is not JSON', 'garbage', /unexpected body/],
    ['JSON that is not a validation result', 'wrong-json', /unexpected body/],
    ['no answer within the timeout', 'hang', /No answer from http:\/\/127\.0\.0\.1:\d+ within 1 s/],
  ];
  for (const [label, mode, why] of failures) {
    it(`${label}: grace just before TTL + grace, community at TTL + grace`, async () => {
      const { key } = await createLicense(portal, { tier: 'business' });
      const t0 = new Date();
      await run({ key, at: t0 });
      const url = mode === 'closed' ? await closedPortUrl() : fake.uploadUrl;
      if (mode !== 'closed') fake.mode = mode;
      const cached = JSON.parse(await cacheText());

      const afterTtl = await run({ key, at: at(t0, TTL_MS), url, timeoutS: 1 });
      expect(summary(afterTtl)).toEqual({ licensed: true, tier: 'business', basis: 'grace' });
      expect(afterTtl.unreachable).toMatch(why);
      expect(afterTtl.valid).toBe(true);
      const graceEnds = at(t0, TTL_MS + GRACE_MS).toISOString();
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(why);
      expect(warnings[0]).toContain(`using the cached business tier until ${graceEnds}`);

      expect(summary(await run({ key, at: at(t0, TTL_MS + GRACE_MS - 1), url, timeoutS: 1 }))).toEqual({
        licensed: true,
        tier: 'business',
        basis: 'grace',
      });

      warnings = [];
      const ended = await run({ key, at: at(t0, TTL_MS + GRACE_MS), url, timeoutS: 1 });
      expect(summary(ended)).toEqual({ licensed: false, tier: '', basis: 'grace-ended' });
      expect(ended.valid).toBe(true); // The portal never said otherwise
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/older than the grace period; running as community$/);

      // Cannot tell is never invalid: the cache is left as it was.
      expect(JSON.parse(await cacheText())).toEqual(cached);

      // Back online: the tier returns.
      fake.mode = 'proxy';
      expect(summary(await run({ key, at: at(t0, TTL_MS + GRACE_MS + DAY_MS) }))).toEqual({
        licensed: true,
        tier: 'business',
        basis: 'online',
      });
    });
  }

  it('SVC_LICENSE_TTL_SECONDS and SVC_LICENSE_GRACE_SECONDS override the defaults', async () => {
    const { key } = await createLicense(portal, { tier: 'msp' });
    const env = { SVC_LICENSE_TTL_SECONDS: '60', SVC_LICENSE_GRACE_SECONDS: '120' };
    const t0 = new Date();
    await run({ key, at: t0, env });
    expect(summary(await run({ key, at: at(t0, 59_999), env }))).toEqual({
      licensed: true,
      tier: 'msp',
      basis: 'cache',
    });
    expect(licenseRequests()).toBe(1);
    const t1 = at(t0, 60_000);
    expect(summary(await run({ key, at: t1, env }))).toEqual({ licensed: true, tier: 'msp', basis: 'online' });
    expect(licenseRequests()).toBe(2);

    fake.mode = 'status500';
    expect(summary(await run({ key, at: at(t1, 60_000), env }))).toEqual({
      licensed: true,
      tier: 'msp',
      basis: 'grace',
    });
    expect(summary(await run({ key, at: at(t1, 179_999), env }))).toEqual({
      licensed: true,
      tier: 'msp',
      basis: 'grace',
    });
    expect(summary(await run({ key, at: at(t1, 180_000), env }))).toEqual({
      licensed: false,
      tier: '',
      basis: 'grace-ended',
    });
    // The defaults would still be in grace (and fresh) here.
    expect(summary(await run({ key, at: at(t1, 180_000) }))).toEqual({ licensed: true, tier: 'msp', basis: 'cache' });
  });

  it('the TTL and grace may come from a config file; a bad value is a configuration error', async () => {
    const { key } = await createLicense(portal, { tier: 'msp' });
    const conf = path.join(home, 'svc.conf');
    await fs.writeFile(
      conf,
      `SVC_LICENSE_TTL_SECONDS=10\nSVC_LICENSE_GRACE_SECONDS=0\nCONSULTATION_API_URL=${fake.uploadUrl}\nSVC_API_KEY=${key}\n`,
    );
    const settings = new Settings({ configFiles: [conf], env: { SVC_LICENSE_TTL_SECONDS: '99999' } });
    const t0 = new Date();
    const ctx = (now: Date) => ({
      settings,
      home,
      now: () => now,
      warn: (m: string) => void warnings.push(m),
      timeoutS: 5,
    });
    await licenseState(ctx(t0));
    fake.mode = 'status500';
    expect(summary(await licenseState(ctx(at(t0, 9_999))))).toEqual({ licensed: true, tier: 'msp', basis: 'cache' });
    expect(summary(await licenseState(ctx(at(t0, 10_000))))).toEqual({
      licensed: false,
      tier: '',
      basis: 'grace-ended',
    });

    await expect(run({ key, at: t0, env: { SVC_LICENSE_TTL_SECONDS: '1d' } })).rejects.toThrow(ConfigError);
    await expect(run({ key, at: t0, env: { SVC_LICENSE_GRACE_SECONDS: '-5' } })).rejects.toThrow(
      'SVC_LICENSE_GRACE_SECONDS must be a whole number of seconds',
    );
  });

  it('no cache at all + server error or missing endpoint: the format tier stands (never invalid), nothing cached', async () => {
    for (const [mode, key, tier] of [
      ['status500', `svc_biz_${'1'.repeat(64)}`, 'business'],
      ['status404', `svc_pro_${'2'.repeat(64)}`, 'professional'],
      ['garbage', `svc_msp_${'3'.repeat(64)}`, 'msp'],
    ] as const) {
      fake.mode = mode;
      warnings = [];
      const s = await run({ key, at: new Date() });
      expect(s, mode).toMatchObject({ licensed: true, tier, basis: 'format', valid: null, reason: null });
      expect(warnings, mode).toEqual([]);
      await expect(fs.stat(licenseCacheFile(home))).rejects.toMatchObject({ code: 'ENOENT' });
    }
  });

  it("a cache of another key does not count: unreachable portal, the format tier stands and the other key's cache is kept", async () => {
    const other = await createLicense(portal, { tier: 'professional' });
    const t0 = new Date();
    await run({ key: other.key, at: t0 });
    await licenseAction(portal, other.record.id, 'revoke');
    await run({ key: other.key, at: at(t0, TTL_MS) }); // now cached as revoked
    const before = await cacheText();
    expect(JSON.parse(before)).toMatchObject({ fingerprint: keyFingerprint(other.key), valid: false });

    fake.mode = 'status500';
    warnings = [];
    const key = `svc_biz_${'7'.repeat(64)}`;
    const s = await run({ key, at: at(t0, TTL_MS + HOUR) });
    expect(s).toMatchObject({
      licensed: true,
      tier: 'business',
      basis: 'format',
      valid: null,
      fingerprint: keyFingerprint(key),
    });
    expect(warnings).toEqual([]);
    expect(await cacheText()).toBe(before);
  });

  it('no portal URL configured: a valid cache is used within TTL + grace the same way', async () => {
    const { key } = await createLicense(portal, { tier: 'business' });
    const t0 = new Date();
    await run({ key, at: t0 });
    const s = await run({ key, at: at(t0, TTL_MS + HOUR), url: null });
    expect(summary(s)).toEqual({ licensed: true, tier: 'business', basis: 'grace' });
    expect(s.unreachable).toBe('no portal URL is configured (CONSULTATION_API_URL)');
    expect(summary(await run({ key, at: at(t0, TTL_MS + GRACE_MS), url: null }))).toEqual({
      licensed: false,
      tier: '',
      basis: 'grace-ended',
    });
  });
});

describe('a locally known past expires_at', () => {
  it('counts as expired regardless of connectivity: community without asking the portal', async () => {
    const realNow = Date.now();
    const expiresAt = new Date(realNow + HOUR).toISOString();
    const { key } = await createLicense(portal, { tier: 'business', expires_at: expiresAt });
    const t0 = new Date(realNow);
    const s = await run({ key, at: t0 });
    expect(s).toMatchObject({ licensed: true, tier: 'business', basis: 'online', expires_at: expiresAt });
    expect(JSON.parse(await cacheText()).expires_at).toBe(expiresAt);
    expect(licenseRequests()).toBe(1);

    // Just before the expiry: still business (fresh cache).
    expect(summary(await run({ key, at: at(t0, HOUR - 1) }))).toEqual({
      licensed: true,
      tier: 'business',
      basis: 'cache',
    });

    // At and past the expiry, fresh cache: community.
    for (const ms of [HOUR, 2 * HOUR]) {
      warnings = [];
      const e = await run({ key, at: at(t0, ms) });
      expect(summary(e)).toEqual({ licensed: false, tier: '', basis: 'expired' });
      expect(warnings).toEqual([`The license key expired at ${expiresAt}; running as community`]);
    }
    // Stale cache, portal reachable (and, by its own clock, still saying valid): community, no request.
    expect(summary(await run({ key, at: at(t0, TTL_MS + 1) }))).toEqual({
      licensed: false,
      tier: '',
      basis: 'expired',
    });
    // Stale cache, portal unreachable, within what would be the grace: community.
    fake.mode = 'status500';
    expect(summary(await run({ key, at: at(t0, TTL_MS + HOUR) }))).toEqual({
      licensed: false,
      tier: '',
      basis: 'expired',
    });
    expect(summary(await run({ key, at: at(t0, TTL_MS + HOUR), url: await closedPortUrl() }))).toEqual({
      licensed: false,
      tier: '',
      basis: 'expired',
    });
    expect(licenseRequests()).toBe(1);
  });

  it('an online answer whose expires_at is already past on this host counts as expired too', async () => {
    const realNow = Date.now();
    const expiresAt = new Date(realNow + HOUR).toISOString();
    const { key } = await createLicense(portal, { tier: 'msp', expires_at: expiresAt });
    // This host's clock is two hours ahead of the portal's: the portal still says valid.
    const s = await run({ key, at: new Date(realNow + 2 * HOUR) });
    expect(s).toMatchObject({ licensed: false, tier: '', basis: 'expired', valid: true, expires_at: expiresAt });
    expect(warnings).toEqual([`The license key expired at ${expiresAt}; running as community`]);
    expect(licenseRequests()).toBe(1);
  });
});

describe('the legacy shared key', () => {
  it('portal says valid with legacy true: client tier legacy, one deprecation warning', async () => {
    const t0 = new Date();
    const s = await run({ key: LEGACY_KEY, at: t0 });
    expect(s).toMatchObject({
      licensed: true,
      tier: 'legacy',
      basis: 'online',
      valid: true,
      reason: 'ok',
      format_tier: 'legacy',
      client_id: null,
    });
    expect(JSON.parse(await cacheText())).toMatchObject({
      tier: 'legacy',
      valid: true,
      fingerprint: keyFingerprint(LEGACY_KEY),
    });
    expect(await cacheText()).not.toContain(LEGACY_KEY);
    expect(summary(await run({ key: LEGACY_KEY, at: at(t0, HOUR) }))).toEqual({
      licensed: true,
      tier: 'legacy',
      basis: 'cache',
    });
    // The deprecation warning was shown once in this process, however often resolution ran.
    expect(warnings).toEqual([
      'A legacy API key (without the svc_ prefix) is in use: it is deprecated; ask for a license key of the form svc_<tier>_<64 hex>',
    ]);
  });
});
