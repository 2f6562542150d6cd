import fs from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { http } from '@svc/test-support/http';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';

/**
 * A legacy key of 16 to 31 characters, as deployments set up before the 32-character rule have:
 * the portal starts (an upgrade must not fail) and says loudly, once, that the key is short.
 * Below 16 characters it does not start (config.slow.test.ts).
 */

let portal: TestPortal | null = null;
afterEach(async () => {
  await portal?.close();
  if (portal) await fs.rm(portal.dataDir, { recursive: true, force: true });
  portal = null;
});

describe('SVC_UPLOAD_API_KEY shorter than 32 characters', () => {
  it('starts, accepts the key and warns once at start without showing it', async () => {
    const key = 'legacy-key-24-characters';
    const lines: string[] = [];
    portal = await startTestPortal({
      env: { SVC_UPLOAD_API_KEY: key, SVC_LOG_LEVEL: 'warn' },
      logDestination: { write: (line: string) => void lines.push(line) },
    });
    const warnings = lines
      .map((l) => JSON.parse(l) as { level: number; msg: string; length?: number })
      .filter((l) => l.msg.startsWith('SVC_UPLOAD_API_KEY'));
    expect(warnings).toEqual([
      expect.objectContaining({
        level: 40,
        length: 24,
        msg: 'SVC_UPLOAD_API_KEY is shorter than 32 characters: it is easy to guess; replace it with a longer one (openssl rand -hex 32) or license keys',
      }),
    ]);
    expect(lines.join('\n')).not.toContain(key);
    const res = await http(portal.url, 'GET', '/api/license', { headers: { 'x-api-key': key } });
    expect(res.status).toBe(200);
  });
});
