import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLicense, licenseAction } from '@svc/test-support/factories';
import { LEGACY_KEY, type TestPortal } from '@svc/test-support/portal';
import { licenseKeyFingerprint as keyFingerprint } from '@svc/protocol/node';
import { runCli, SVC, tempHome, type CliResult } from '@svc/test-support/cli';
import { startFakePortal, type FakePortal } from '@svc/test-support/license-fake-portal';
import { usePortalWithKey } from './helpers/portal-with-key.ts';

/**
 * `svc license status` as a real process (docs/cli.md#license-tier): what it
 * prints, that it asks the portal at most once per run, that the key never leaks, exit codes.
 */

let portal: TestPortal;
let fake: FakePortal;

const fixture = usePortalWithKey();

beforeAll(async () => {
  portal = fixture.portal;
  fake = await startFakePortal(portal.url);
});
afterAll(async () => {
  await fake?.close();
});
beforeEach(() => {
  fake.mode = 'proxy';
  fake.requests = [];
});

const DEPRECATION =
  'A legacy API key (without the svc_ prefix) is in use: it is deprecated; ask for a license key of the form svc_<tier>_<64 hex>';

/** Every file under `dir`, recursively, with its content. */
async function filesUnder(dir: string): Promise<{ file: string; text: string }[]> {
  const out: { file: string; text: string }[] = [];
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(p)));
    else if (entry.isFile()) out.push({ file: p, text: await fs.readFile(p, 'utf8') });
  }
  return out;
}

/** The key (and its secret part) appears nowhere: not on stdout, not on stderr, not in any file under HOME except the ones listed. */
async function expectNoLeak(key: string, r: CliResult, home: string, allowedFiles: string[] = []): Promise<void> {
  const secret = key.replace(/^svc_[a-z]+_/, '');
  for (const needle of [key, secret]) {
    expect(r.stdout).not.toContain(needle);
    expect(r.stderr).not.toContain(needle);
    for (const { file, text } of await filesUnder(home))
      if (!allowedFiles.includes(file)) expect(text, file).not.toContain(needle);
  }
}

async function status(args: string[], env: Record<string, string | undefined>, home?: string) {
  const h = home ?? (await tempHome());
  const r = await runCli(SVC, ['license', 'status', ...args], { env, home: h });
  return { ...r, home: h, json: args.includes('--json') && r.code === 0 ? JSON.parse(r.stdout) : undefined };
}

describe('svc license status --json', () => {
  it('a business key: SVC_LICENSED, SVC_LICENSE_TIER, SVC_LICENSE_SOURCE; one request; the key nowhere', async () => {
    const { key, record } = await createLicense(portal, { tier: 'business' });
    const r = await status(['--json'], { SVC_API_KEY: key, CONSULTATION_API_URL: fake.uploadUrl });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.json).toMatchObject({
      SVC_LICENSED: true,
      SVC_LICENSE_TIER: 'business',
      SVC_LICENSE_SOURCE: 'env:SVC_API_KEY',
      basis: 'online',
      valid: true,
      reason: 'ok',
      client_id: record.client_id,
      fingerprint: keyFingerprint(key),
      features: {
        compliance: true,
        benchmark: true,
        remediation: true,
        webhooks: true,
        c2: true,
        agent_commands: true,
      },
      cache_file: path.join(r.home, '.svc', 'license_cache.json'),
    });
    expect(fake.requests.map((q) => q.path)).toEqual(['/api/license']);
    await expectNoLeak(key, r, r.home);
    const cache = await fs.stat(path.join(r.home, '.svc', 'license_cache.json'));
    expect(cache.mode & 0o777).toBe(0o600);

    // The next run within the TTL asks nobody.
    const again = await status(['--json'], { SVC_API_KEY: key, CONSULTATION_API_URL: fake.uploadUrl }, r.home);
    expect(again.code).toBe(0);
    expect(again.json).toMatchObject({ SVC_LICENSED: true, SVC_LICENSE_TIER: 'business', basis: 'cache' });
    expect(fake.requests).toHaveLength(1);
  });

  it('no key anywhere: community, not licensed, empty tier and source; no request; exit 0', async () => {
    const r = await status(['--json'], { CONSULTATION_API_URL: fake.uploadUrl });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.json).toMatchObject({
      SVC_LICENSED: false,
      SVC_LICENSE_TIER: '',
      SVC_LICENSE_SOURCE: '',
      basis: 'no-key',
      fingerprint: null,
    });
    expect(r.json.features).toEqual({
      compliance: false,
      benchmark: false,
      remediation: false,
      webhooks: false,
      c2: false,
      agent_commands: false,
    });
    expect(fake.requests).toHaveLength(0);
  });

  it('each source is reported as SVC_LICENSE_SOURCE', async () => {
    const { key } = await createLicense(portal, { tier: 'professional' });
    const url = { CONSULTATION_API_URL: fake.uploadUrl };
    const home = await tempHome();
    const conf = path.join(home, 'svc.conf');
    await fs.writeFile(conf, `SVC_API_KEY=${key}\nCONSULTATION_API_KEY=${key}\n`);
    const cases: [string[], Record<string, string>, string][] = [
      [[], { ...url, SVC_LICENSE_KEY: key, SVC_API_KEY: 'other' }, 'env:SVC_LICENSE_KEY'],
      [['-c', conf], { ...url, SVC_API_KEY: 'other' }, 'config:SVC_API_KEY'],
      [[], { ...url, SVC_API_KEY: key, CONSULTATION_API_KEY: 'other' }, 'env:SVC_API_KEY'],
      [[], { ...url, CONSULTATION_API_KEY: key }, 'env:CONSULTATION_API_KEY'],
      [['-k', key], { ...url, SVC_LICENSE_KEY: 'other' }, 'flag:-k'],
    ];
    for (const [args, env, source] of cases) {
      const r = await status(['--json', ...args], env);
      expect(r.code, source).toBe(0);
      expect(r.json, source).toMatchObject({
        SVC_LICENSED: true,
        SVC_LICENSE_TIER: 'professional',
        SVC_LICENSE_SOURCE: source,
      });
      await expectNoLeak(key, r, r.home);
    }
  });

  it('~/.svc/license.key: lowest source; a 644 file is tightened to 600 with a warning on stderr', async () => {
    const { key } = await createLicense(portal, { tier: 'msp' });
    const home = await tempHome();
    const file = path.join(home, '.svc', 'license.key');
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, `# issued for this host\n\n${key}\n`);
    await fs.chmod(file, 0o644);
    const r = await status(['--json'], { CONSULTATION_API_URL: fake.uploadUrl }, home);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({
      SVC_LICENSED: true,
      SVC_LICENSE_TIER: 'msp',
      SVC_LICENSE_SOURCE: 'file:~/.svc/license.key',
    });
    expect(r.stderr).toBe(`warning: ${file} was readable by others (mode 644); its mode is now 600\n`);
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    // The key lives in its own file only.
    await expectNoLeak(key, r, home, [file]);
  });

  it('a config file cannot set SVC_LICENSE_KEY', async () => {
    const home = await tempHome();
    const conf = path.join(home, 'svc.conf');
    await fs.writeFile(conf, `SVC_LICENSE_KEY=svc_msp_${'a'.repeat(64)}\n`);
    const r = await status(['--json', '-c', conf], { CONSULTATION_API_URL: fake.uploadUrl }, home);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ SVC_LICENSED: false, SVC_LICENSE_TIER: '', SVC_LICENSE_SOURCE: '' });
    expect(r.stderr).toBe(
      `warning: SVC_LICENSE_KEY in ${conf} is ignored: it is read from the environment only (a config file may set SVC_API_KEY)\n`,
    );
  });

  it('the legacy shared key: tier legacy, the deprecation warning exactly once, one request', async () => {
    const r = await status(['--json'], { CONSULTATION_API_KEY: LEGACY_KEY, CONSULTATION_API_URL: fake.uploadUrl });
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({
      SVC_LICENSED: true,
      SVC_LICENSE_TIER: 'legacy',
      SVC_LICENSE_SOURCE: 'env:CONSULTATION_API_KEY',
      basis: 'online',
      valid: true,
    });
    expect(r.stderr).toBe(`warning: ${DEPRECATION}\n`);
    expect(fake.requests).toHaveLength(1);
    await expectNoLeak(LEGACY_KEY, r, r.home);
  });

  it('a revoked key: community with a warning naming the reason; exit 0 (licensing never fails)', async () => {
    const { key, record } = await createLicense(portal, { tier: 'business' });
    await licenseAction(portal, record.id, 'revoke');
    const r = await status(['--json'], { SVC_API_KEY: key, CONSULTATION_API_URL: fake.uploadUrl });
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({
      SVC_LICENSED: false,
      SVC_LICENSE_TIER: '',
      SVC_LICENSE_SOURCE: 'env:SVC_API_KEY',
      basis: 'online',
      valid: false,
      reason: 'revoked',
    });
    expect(r.stderr).toBe(
      'warning: The portal reports this license key as not valid (reason: revoked); running as community until it is valid again\n',
    );
    await expectNoLeak(key, r, r.home);
  });

  it('the portal fails (500): one request, the format tier, exit 0', async () => {
    fake.mode = 'status500';
    const key = `svc_biz_${'4'.repeat(64)}`;
    const r = await status(['--json'], { SVC_API_KEY: key, CONSULTATION_API_URL: fake.uploadUrl });
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({
      SVC_LICENSED: true,
      SVC_LICENSE_TIER: 'business',
      basis: 'format',
      valid: null,
      unreachable: 'the portal answered HTTP 500',
    });
    expect(r.stderr).toBe('');
    expect(fake.requests).toHaveLength(1);
  });

  it('-u and --timeout: a hanging portal is given up on after the timeout', async () => {
    fake.mode = 'hang';
    const key = `svc_pro_${'8'.repeat(64)}`;
    const started = Date.now();
    const r = await status(['--json', '-u', fake.origin, '--timeout', '1'], { SVC_API_KEY: key });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({
      SVC_LICENSE_TIER: 'professional',
      basis: 'format',
      unreachable: `No answer from ${fake.origin} within 1 s`,
    });
    expect(fake.requests).toHaveLength(1);
  });
});

describe('svc license status (text)', () => {
  it('prints the state, never the key', async () => {
    const { key } = await createLicense(portal, { tier: 'professional' });
    const r = await status([], { SVC_API_KEY: key, CONSULTATION_API_URL: fake.uploadUrl });
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines.slice(0, 5)).toEqual([
      'Licensed:    yes',
      'Tier:        professional',
      'Key source:  env:SVC_API_KEY',
      `Fingerprint: ${keyFingerprint(key)}`,
      'Basis:       checked with the portal now',
    ]);
    expect(r.stdout).toMatch(/^Portal says: valid at \d{4}-\d\d-\d\dT/m);
    expect(r.stdout).toContain('Features:    compliance (needs business), benchmark (needs business)');
    expect(r.stdout).not.toMatch(/\u001b\[/); // no color into a pipe
    await expectNoLeak(key, r, r.home);
  });

  it('community: "Licensed: no", "Tier: community"', async () => {
    const r = await status([], {});
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n').slice(0, 3)).toEqual(['Licensed:    no', 'Tier:        community', 'Key source:  -']);
  });
});

describe('exit codes', () => {
  it('2 for configuration errors: missing -c file, bad --timeout, bad URL, bad TTL', async () => {
    const missing = await status(['-c', '/nonexistent/svc.conf'], {});
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe('error: Config file not found: /nonexistent/svc.conf\n');
    const timeout = await status(['--timeout', 'soon'], {});
    expect(timeout.code).toBe(2);
    expect(timeout.stderr).toContain('--timeout must be a whole number of seconds');
    const url = await status([], { CONSULTATION_API_URL: 'not a url', SVC_API_KEY: `svc_pro_${'1'.repeat(64)}` });
    expect(url.code).toBe(2);
    expect(url.stderr).toBe('error: Portal URL is not a URL: not a url\n');
    const ttl = await status([], { SVC_LICENSE_TTL_SECONDS: 'a day', SVC_API_KEY: `svc_pro_${'1'.repeat(64)}` });
    expect(ttl.code).toBe(2);
    expect(ttl.stderr).toContain('SVC_LICENSE_TTL_SECONDS must be a whole number of seconds');
    expect(fake.requests).toHaveLength(0);
  });
});
