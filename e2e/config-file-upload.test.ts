import { describe, expect, it } from 'vitest';
import { runCli, SVC, useTempHome } from '@svc/test-support/cli';
import { sessionDoc } from '@svc/test-support/upload';
import { usePortalWithKey } from './helpers/portal-with-key.ts';

/** A client config file (`svc upload -c`) naming the real portal and a key it issued; the config rules are in packages/client/tests/config.slow.test.ts. */

const home = useTempHome();
const file = home.file;

describe('a config file against the real portal', () => {
  const fixture = usePortalWithKey({ tier: 'professional' });

  it("svc upload -c with URL and key from the file only: uploaded under the key's client", async () => {
    const { key, clientId, uploadUrl } = fixture;
    const doc = sessionDoc('session-minimal.json');
    const sessionFile = await file('real-session.json', JSON.stringify(doc));
    const c = await file(
      'real.conf',
      `# real portal\r\nexport CONSULTATION_API_URL='${uploadUrl}'\r\nSVC_API_KEY="${key}" # issued to ${clientId}\r\n`,
    );
    const r = await runCli(SVC, ['upload', sessionFile, '-c', c, '--json'], {
      env: { CONSULTATION_API_URL: 'http://127.0.0.1:9/api/upload', SVC_API_KEY: 'wrong' },
    });
    expect(r.code).toBe(0);
    const body = JSON.parse(r.stdout);
    expect(body).toMatchObject({ success: true, session_id: doc['metadata']['session_id'] });
    expect(body.share_token).toMatch(/^[0-9a-f]{64}$/);
    expect(r.stdout + r.stderr).not.toContain(key);
  });
});
