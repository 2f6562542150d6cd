import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionDoc } from '@svc/test-support/upload';
import { Settings } from '../src/kit/config/settings.ts';
import { PortalError } from '../src/kit/portal/errors.ts';
import { resolveTarget, uploadUrlOf } from '../src/kit/portal/target.ts';
import { runCli, SVC } from '@svc/test-support/cli';

/**
 * Plain http to a portal that is not this machine is refused unless allowed explicitly:
 * the API key and the agent's commands would cross the network in clear.
 * `.invalid` hosts never resolve, so a check that let one through ends in "unreachable".
 */

const refusal = (url: string, host: string) =>
  `Portal URL ${url} uses plain http to ${host}, which is not this machine: the license key and the portal's answers would cross the network unprotected. Use https, or accept the risk with SVC_ALLOW_INSECURE_HTTP=true (svc: --allow-insecure-http)`;

describe('uploadUrlOf: the transport rule', () => {
  it.each([
    'https://portal.example',
    'https://10.0.0.5:8443/api/upload',
    'http://127.0.0.1:8080',
    'http://127.8.9.10/api/upload',
    'http://localhost:8080/api/upload',
    'http://LOCALHOST.',
    'http://[::1]:8080',
    // WHATWG URL parsing gives these their dotted loopback form first.
    'http://2130706433:8080',
    'http://0x7f.1/api/upload',
  ])('%s is accepted without the setting', (url) => {
    expect(() => uploadUrlOf(url, { allowInsecureHttp: false })).not.toThrow();
  });

  it.each([
    ['http://portal.example', 'portal.example'],
    ['http://10.0.0.5:8080/api/upload', '10.0.0.5'],
    ['http://[fe80::1]/api/upload', '[fe80::1]'],
    ['http://[::ffff:127.0.0.1]/api/upload', '[::ffff:7f00:1]'],
    ['http://localhost.evil.example', 'localhost.evil.example'],
    ['http://127.0.0.1.evil.example', '127.0.0.1.evil.example'],
  ])('%s is refused, and accepted when allowed', (url, host) => {
    const shown = uploadUrlOf(url, { allowInsecureHttp: true });
    expect(() => uploadUrlOf(url, { allowInsecureHttp: false })).toThrow(
      new PortalError('config', refusal(new URL(shown).origin, host)),
    );
  });

  it('resolveTarget: SVC_ALLOW_INSECURE_HTTP=true or the flag allow it, with a warning', () => {
    const warnings: string[] = [];
    const warn = (m: string) => warnings.push(m);
    const plain = new Settings({ env: { CONSULTATION_API_URL: 'http://portal.example/api/upload' } });
    expect(() => resolveTarget(plain, {}, { home: '/nonexistent', warn })).toThrow(/uses plain http/);
    expect(resolveTarget(plain, { allowInsecureHttp: true }, { home: '/nonexistent', warn }).uploadUrl).toBe(
      'http://portal.example/api/upload',
    );
    const allowed = new Settings({
      env: { CONSULTATION_API_URL: 'http://portal.example/api/upload', SVC_ALLOW_INSECURE_HTTP: 'true' },
    });
    expect(resolveTarget(allowed, {}, { home: '/nonexistent', warn }).uploadUrl).toBe(
      'http://portal.example/api/upload',
    );
    const warning =
      "plain http to portal.example: the license key and the portal's answers cross the network unprotected (allowed explicitly)";
    expect(warnings).toEqual([warning, warning]);
  });
});

describe('svc as a process', () => {
  let dir: string;
  let session: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-insecure-http-'));
    session = path.join(dir, 'session_results.json');
    await fs.writeFile(session, JSON.stringify(sessionDoc('session-minimal.json')));
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('svc upload to http://<remote host>: exit 2 with the reason, nothing sent', async () => {
    const r = await runCli(SVC, ['upload', session, '-k', 'svc_biz_0'], {
      env: { CONSULTATION_API_URL: 'http://portal.invalid/api/upload' },
    });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`error: ${refusal('http://portal.invalid', 'portal.invalid')}\n`);
  });

  it('--allow-insecure-http lets it through with a warning (then the .invalid host is unreachable)', async () => {
    const r = await runCli(
      SVC,
      ['upload', session, '-k', 'svc_biz_0', '-u', 'http://portal.invalid', '--allow-insecure-http'],
      {
        env: {},
      },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^warning: plain http to portal\.invalid: the license key and the portal's answers cross the network unprotected \(allowed explicitly\)\nerror: .*portal\.invalid/,
    );
  });
});
