import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Settings } from '@svc/client/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, runCli } from '@svc/test-support/cli';
import { MissingSettingError, requirePortal } from '../src/config.ts';

/**
 * svcd refuses plain http to a portal that is not this machine unless allowed explicitly, as svc
 * does (packages/client/tests/insecure-http.slow.test.ts): the API key and the agent's commands would
 * cross the network in clear.
 */

const SVCD = path.join(REPO, 'packages/agent/bin/svcd');
const refusal = (url: string, host: string) =>
  `Portal URL ${url} uses plain http to ${host}, which is not this machine: the license key and the portal's answers would cross the network unprotected. Use https, or accept the risk with SVC_ALLOW_INSECURE_HTTP=true (svc: --allow-insecure-http)`;

describe('svcd and plain http', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svcd-insecure-http-'));
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it("svcd's configuration check refuses it as a missing setting would be refused", () => {
    const settings = new Settings({
      env: { CONSULTATION_API_URL: 'http://portal.example/api/upload', SVC_API_KEY: 'k' },
    });
    expect(() => requirePortal(settings)).toThrow(
      new MissingSettingError(`svcd: ${refusal('http://portal.example', 'portal.example')}`),
    );
  });

  it('svcd with such a URL stops at start with exit 3 and the reason in one line', async () => {
    const configs = path.join(dir, 'configs');
    await fs.mkdir(configs);
    await fs.writeFile(
      path.join(configs, 'p.conf'),
      'CONSULTATION_API_URL=http://portal.invalid/api/upload\nSVC_API_KEY=svc_biz_0\n',
    );
    const r = await runCli(SVCD, ['--config-dir', configs], { home: dir });
    expect(r).toMatchObject({ code: 3, stdout: '' });
    expect(r.stderr).toBe(`svcd: ${refusal('http://portal.invalid', 'portal.invalid')}\n`);
  });
});
