import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Settings } from '../src/kit/config/settings.ts';
import { licenseKeyFingerprint as keyFingerprint } from '@svc/protocol/node';
import { parseKeyFormat } from '../src/kit/license/format.ts';
import { licenseKeyFile, resolveKey } from '../src/kit/config/license-key.ts';
import { resolveTier } from '../src/kit/license/tier.ts';
import { licenseCacheFile } from '../src/kit/license/cache.ts';
import { tempHome } from '@svc/test-support/cli';

/**
 * docs/cli.md#license-tier, in process: which key is
 * used (and where it came from), and what its format alone says.
 */

const hex = (c: string) => c.repeat(64);
const PRO = `svc_pro_${hex('a')}`;
const BIZ = `svc_biz_${hex('b')}`;
const MSP = `svc_msp_${hex('c')}`;
const PRO2 = `svc_pro_${hex('d')}`;
const PRO3 = `svc_pro_${hex('e')}`;

let home: string;
let warnings: string[];
const warn = (m: string) => void warnings.push(m);

beforeEach(async () => {
  home = await tempHome();
  warnings = [];
});
afterEach(async () => {
  await fs.rm(home, { recursive: true, force: true });
});

async function config(values: Record<string, string>, name = 'svc.conf'): Promise<string> {
  const file = path.join(home, name);
  await fs.writeFile(
    file,
    Object.entries(values)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n') + '\n',
  );
  return file;
}

async function keyFile(text: string, mode = 0o600): Promise<string> {
  const file = licenseKeyFile(home);
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, text);
  await fs.chmod(file, mode);
  return file;
}

async function resolve(env: Record<string, string>, configValues?: Record<string, string>) {
  const configFiles = configValues === undefined ? [] : [await config(configValues)];
  return resolveKey(new Settings({ configFiles, env }), home, warn);
}

describe('rule 1: key resolution order', () => {
  it('SVC_LICENSE_KEY in the environment wins over every other source', async () => {
    await keyFile(`${PRO3}\n`);
    const r = await resolve(
      { SVC_LICENSE_KEY: MSP, SVC_API_KEY: PRO, CONSULTATION_API_KEY: PRO2 },
      { SVC_API_KEY: BIZ, CONSULTATION_API_KEY: PRO2 },
    );
    expect(r).toEqual({ key: MSP, source: 'env:SVC_LICENSE_KEY' });
    expect(warnings).toEqual([]);
  });

  it('a config file cannot shadow SVC_LICENSE_KEY from the environment', async () => {
    expect(await resolve({ SVC_LICENSE_KEY: MSP }, { SVC_LICENSE_KEY: BIZ })).toEqual({
      key: MSP,
      source: 'env:SVC_LICENSE_KEY',
    });
  });

  it('a config file cannot set SVC_LICENSE_KEY: the next source is used, or none, with a warning', async () => {
    expect(await resolve({ SVC_API_KEY: PRO }, { SVC_LICENSE_KEY: BIZ })).toEqual({
      key: PRO,
      source: 'env:SVC_API_KEY',
    });
    const conf = path.join(home, 'svc.conf');
    expect(warnings).toEqual([
      `SVC_LICENSE_KEY in ${conf} is ignored: it is read from the environment only (a config file may set SVC_API_KEY)`,
    ]);
    warnings = [];
    expect(await resolve({}, { SVC_LICENSE_KEY: BIZ })).toBeNull();
    expect(warnings).toHaveLength(1);
    // With SVC_LICENSE_KEY in the environment the config value shadows nothing: no warning needed.
    warnings = [];
    await resolve({ SVC_LICENSE_KEY: MSP }, { SVC_LICENSE_KEY: BIZ });
    expect(warnings).toEqual([]);
  });

  it('SVC_API_KEY: the config value beats the environment value', async () => {
    expect(await resolve({ SVC_API_KEY: PRO }, { SVC_API_KEY: BIZ })).toEqual({
      key: BIZ,
      source: 'config:SVC_API_KEY',
    });
    expect(await resolve({ SVC_API_KEY: PRO })).toEqual({ key: PRO, source: 'env:SVC_API_KEY' });
  });

  it('SVC_API_KEY from either place beats CONSULTATION_API_KEY from either place', async () => {
    expect(await resolve({ SVC_API_KEY: PRO }, { CONSULTATION_API_KEY: BIZ })).toEqual({
      key: PRO,
      source: 'env:SVC_API_KEY',
    });
    expect(await resolve({ CONSULTATION_API_KEY: BIZ }, { SVC_API_KEY: PRO })).toEqual({
      key: PRO,
      source: 'config:SVC_API_KEY',
    });
    expect(await resolve({ SVC_API_KEY: PRO, CONSULTATION_API_KEY: BIZ })).toEqual({
      key: PRO,
      source: 'env:SVC_API_KEY',
    });
  });

  it('a key svcd read from its config file: the source names that file (SVC_KEY_CONFIG_FILE)', async () => {
    const file = '/etc/svc/configs/portal.conf';
    expect(await resolve({ SVC_API_KEY: PRO, SVC_KEY_CONFIG_FILE: file })).toEqual({
      key: PRO,
      source: `svcd-config:${file}`,
    });
    expect(await resolve({ CONSULTATION_API_KEY: PRO, SVC_KEY_CONFIG_FILE: file })).toEqual({
      key: PRO,
      source: `svcd-config:${file}`,
    });
    // svc's own config file still wins, and says so.
    expect(await resolve({ SVC_API_KEY: PRO, SVC_KEY_CONFIG_FILE: file }, { SVC_API_KEY: BIZ })).toEqual({
      key: BIZ,
      source: 'config:SVC_API_KEY',
    });
    // SVC_LICENSE_KEY is read from the environment only: the hint does not apply to it.
    expect(await resolve({ SVC_LICENSE_KEY: MSP, SVC_KEY_CONFIG_FILE: file })).toEqual({
      key: MSP,
      source: 'env:SVC_LICENSE_KEY',
    });
  });

  it('CONSULTATION_API_KEY: the config value beats the environment value', async () => {
    expect(await resolve({ CONSULTATION_API_KEY: PRO }, { CONSULTATION_API_KEY: BIZ })).toEqual({
      key: BIZ,
      source: 'config:CONSULTATION_API_KEY',
    });
    expect(await resolve({ CONSULTATION_API_KEY: PRO })).toEqual({ key: PRO, source: 'env:CONSULTATION_API_KEY' });
  });

  it('later config files win over earlier ones', async () => {
    const a = await config({ SVC_API_KEY: PRO }, 'a.conf');
    const b = await config({ SVC_API_KEY: BIZ }, 'b.conf');
    expect(resolveKey(new Settings({ configFiles: [a, b], env: {} }), home, warn)).toEqual({
      key: BIZ,
      source: 'config:SVC_API_KEY',
    });
    expect(resolveKey(new Settings({ configFiles: [b, a], env: {} }), home, warn)).toEqual({
      key: PRO,
      source: 'config:SVC_API_KEY',
    });
  });

  it('blank values do not count as set', async () => {
    expect(
      await resolve({ SVC_LICENSE_KEY: '  ', SVC_API_KEY: '' }, { SVC_API_KEY: '', CONSULTATION_API_KEY: PRO }),
    ).toEqual({ key: PRO, source: 'config:CONSULTATION_API_KEY' });
  });

  it('~/.svc/license.key is the lowest source', async () => {
    await keyFile(`${PRO3}\n`);
    expect(await resolve({})).toEqual({ key: PRO3, source: 'file:~/.svc/license.key' });
    expect(await resolve({ CONSULTATION_API_KEY: PRO })).toEqual({ key: PRO, source: 'env:CONSULTATION_API_KEY' });
    expect(await resolve({}, { CONSULTATION_API_KEY: BIZ })).toEqual({
      key: BIZ,
      source: 'config:CONSULTATION_API_KEY',
    });
    expect(warnings).toEqual([]);
  });

  it('no key anywhere: null', async () => {
    expect(
      await resolve(
        { CONSULTATION_API_URL: 'http://127.0.0.1:1/api/upload' },
        { CONSULTATION_API_URL: 'http://127.0.0.1:2/api/upload' },
      ),
    ).toBeNull();
  });

  it('a key file readable by others (644) is tightened to 600, with a warning', async () => {
    const file = await keyFile(`${PRO3}\n`, 0o644);
    expect(await resolve({})).toEqual({ key: PRO3, source: 'file:~/.svc/license.key' });
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    expect(warnings).toEqual([`${file} was readable by others (mode 644); its mode is now 600`]);
    // Once tightened, nothing more to say.
    warnings = [];
    expect(await resolve({})).toEqual({ key: PRO3, source: 'file:~/.svc/license.key' });
    expect(warnings).toEqual([]);
  });

  it('a key file of mode 600 is left alone, without a warning', async () => {
    const file = await keyFile(PRO3, 0o600);
    expect(await resolve({})).toEqual({ key: PRO3, source: 'file:~/.svc/license.key' });
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    expect(warnings).toEqual([]);
  });

  it('the key file: comments, blank lines, surrounding whitespace and CRLF are skipped', async () => {
    await keyFile(`# my license key\r\n\r\n   \r\n  # another comment\r\n  ${BIZ}  \r\n# trailing\r\n`);
    expect(await resolve({})).toEqual({ key: BIZ, source: 'file:~/.svc/license.key' });
  });

  it('a key file with only comments and blank lines holds no key', async () => {
    await keyFile('# nothing here yet\n\n');
    expect(await resolve({})).toBeNull();
  });

  it('the key is trimmed from every source', async () => {
    expect(await resolve({ SVC_LICENSE_KEY: `  ${MSP}\t` })).toEqual({ key: MSP, source: 'env:SVC_LICENSE_KEY' });
  });
});

describe('rule 2-3: format parse', () => {
  it('svc_pro / svc_biz / svc_msp with 64 lowercase hex: professional / business / msp, licensed', () => {
    expect(parseKeyFormat(PRO)).toEqual({ licensed: true, tier: 'professional', warning: null });
    expect(parseKeyFormat(BIZ)).toEqual({ licensed: true, tier: 'business', warning: null });
    expect(parseKeyFormat(MSP)).toEqual({ licensed: true, tier: 'msp', warning: null });
    expect(parseKeyFormat(`svc_biz_${'0123456789abcdef'.repeat(4)}`)).toEqual({
      licensed: true,
      tier: 'business',
      warning: null,
    });
  });

  it('no key: community (not licensed, tier empty)', () => {
    expect(parseKeyFormat(null)).toEqual({ licensed: false, tier: '', warning: null });
    expect(parseKeyFormat('')).toEqual({ licensed: false, tier: '', warning: null });
    expect(parseKeyFormat('   ')).toEqual({ licensed: false, tier: '', warning: null });
  });

  it('a key without the svc_ prefix: legacy with a deprecation warning', () => {
    const r = parseKeyFormat('legacy-shared-key-0123');
    expect(r.licensed).toBe(true);
    expect(r.tier).toBe('legacy');
    expect(r.warning).toMatch(/legacy API key .*deprecated/);
  });

  it.each([
    ['63 hex', `svc_pro_${hex('a').slice(1)}`],
    ['65 hex', `svc_pro_${hex('a')}a`],
    ['uppercase hex', `svc_pro_${hex('A')}`],
    ['unknown tier segment', `svc_ent_${hex('a')}`],
    ['full tier name', `svc_professional_${hex('a')}`],
    ['uppercase tier', `svc_PRO_${hex('a')}`],
    ['non-hex', `svc_biz_${hex('g')}`],
    ['no hex at all', 'svc_biz_'],
  ])('a malformed svc_ key (%s): legacy with a format warning', (_label, key) => {
    expect(parseKeyFormat(key)).toEqual({
      licensed: true,
      tier: 'legacy',
      warning:
        'The license key does not match svc_{pro|biz|msp}_{64 hex}; treating it as legacy until the portal says otherwise',
    });
  });

  it('the fingerprint is the first 16 hex of the SHA-256 of the key', () => {
    expect(keyFingerprint(PRO)).toMatch(/^[0-9a-f]{16}$/);
    expect(keyFingerprint('abc')).toBe('ba7816bf8f01cfea');
    expect(keyFingerprint(PRO)).not.toBe(keyFingerprint(PRO2));
  });
});

describe('resolveTier from the format alone (no portal URL, no cache)', () => {
  const tierOf = (key: string | null, source = 'env:SVC_API_KEY' as const, w = warn) =>
    resolveTier({
      key: key === null ? null : { key, source },
      cacheFile: licenseCacheFile(home),
      now: () => new Date(),
      ttlS: 86_400,
      graceS: 259_200,
      validateOnline: null,
      warn: w,
    });

  it('svc_ keys: their tier, licensed, source reported', async () => {
    for (const [key, tier] of [
      [PRO, 'professional'],
      [BIZ, 'business'],
      [MSP, 'msp'],
    ] as const) {
      const s = await tierOf(key);
      expect({
        licensed: s.licensed,
        tier: s.tier,
        source: s.source,
        basis: s.basis,
        fingerprint: s.fingerprint,
        key_sha256: s.key_sha256,
      }).toEqual({
        licensed: true,
        tier,
        source: 'env:SVC_API_KEY',
        basis: 'format',
        fingerprint: keyFingerprint(key),
        // metadata.license.fingerprint: the whole SHA-256, as the session file says.
        key_sha256: createHash('sha256').update(key).digest('hex'),
      });
    }
    expect(warnings).toEqual([]);
  });

  it('no key: community, licensed false, tier empty, no source', async () => {
    const s = await tierOf(null);
    expect({ licensed: s.licensed, tier: s.tier, source: s.source, basis: s.basis }).toEqual({
      licensed: false,
      tier: '',
      source: null,
      basis: 'no-key',
    });
    expect(warnings).toEqual([]);
  });

  it('a legacy key warns of its deprecation once per run, however often resolution runs', async () => {
    const key = `legacy-key-once-${Date.now()}`;
    const a = await tierOf(key);
    const b = await tierOf(key);
    expect([a.tier, b.tier]).toEqual(['legacy', 'legacy']);
    expect(warnings.filter((w) => w.includes('deprecated'))).toHaveLength(1);
    expect(warnings).toHaveLength(1);
  });

  it('a malformed svc_ key warns once per run too, and maps to legacy', async () => {
    const key = `svc_ent_${hex('9')}`;
    const a = await tierOf(key);
    const b = await tierOf(key);
    expect([a.tier, a.licensed, b.tier]).toEqual(['legacy', true, 'legacy']);
    expect(warnings).toEqual([
      'The license key does not match svc_{pro|biz|msp}_{64 hex}; treating it as legacy until the portal says otherwise',
    ]);
  });
});
