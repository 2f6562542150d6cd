import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controlEmbeddedPostgres, startEmbeddedPostgres, type EmbeddedServer } from '../src/db/embedded.ts';
import { freePort } from '@svc/test-support/ports';
import { withKey, withToken } from '@svc/test-support/http';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { stopPostgresIn } from '@svc/test-support/portal-process';

/**
 * docs/api.md: "a database restart gives fast 503s, then recovery without a process restart".
 * A dedicated embedded cluster (the shared test cluster must stay up for other files),
 * an in-process portal on it, and the database stopped and started under the portal.
 */

const UNAVAILABLE = { error: 'Database unavailable, try again shortly' };

interface Answer {
  status: number;
  retryAfter: string | null;
  contentType: string | null;
  body: unknown;
}

/** One request, bounded at 10 s so a hang fails the test instead of stalling it. */
async function call(
  url: string,
  method: string,
  headers: Record<string, string> = {},
  body?: URLSearchParams | string,
): Promise<Answer> {
  const res = await fetch(url, {
    method,
    headers,
    ...(body === undefined ? {} : { body }),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    contentType: res.headers.get('content-type'),
    body: (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text,
  };
}

describe('database outage under a running portal', () => {
  let dir: string;
  let port: number;
  let server: EmbeddedServer | null = null;
  let portal: TestPortal | null = null;
  let coldPortal: TestPortal | null = null;
  let token: string;
  let licenseId: string;
  let licenseKey: string;

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-outage-'));
    await fs.chmod(dir, 0o755);
    port = await freePort();
    server = await startEmbeddedPostgres({
      dataDir: dir,
      port,
      logger: pino({ level: 'silent' }),
      settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' },
    });
    portal = await startTestPortal({ databaseUrl: server.url });

    // Everything that needs the database before the outage: the token, and one verified
    // request so the identity keys are loaded.
    token = await portal.adminToken();
    const created = await call(
      `${portal.url}/api/licenses`,
      'POST',
      { ...withToken(token), 'content-type': 'application/json' },
      JSON.stringify({ tier: 'business', client_id: 'outage', name: 'outage key' }),
    );
    expect(created.status).toBe(201);
    const license = (created.body as { license: { id: string; plaintext_key: string } }).license;
    licenseId = license.id;
    licenseKey = license.plaintext_key;
    coldPortal = await startTestPortal({ databaseUrl: server.url });
  });

  afterAll(async () => {
    await portal?.close();
    await coldPortal?.close();
    // The cluster may be stopped (a failed test) or running; end it either way.
    await server?.stop();
    await stopPostgresIn(dir, port);
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('answers 200 before the outage', async () => {
    const res = await call(`${portal!.url}/api/licenses`, 'GET', withToken(token));
    expect(res.status).toBe(200);
    expect((res.body as { licenses: { id: string }[] }).licenses.map((l) => l.id)).toEqual([licenseId]);
  });

  it('gives 503 with Retry-After while the database is down, keeps /api/health at 200, and recovers by itself', async () => {
    const url = portal!.url;
    await controlEmbeddedPostgres(dir, 'stop', port);

    // Several times: the first request may meet a pooled connection the shutdown cut, later
    // ones a refused connect; both are "unavailable", never a 500 or a hang.
    for (let i = 0; i < 3; i++) {
      const res = await call(`${url}/api/licenses`, 'GET', withToken(token));
      expect(res.status).toBe(503);
      expect(res.retryAfter).toBe('5');
      expect(res.contentType).toMatch(/^application\/json/);
      expect(res.body).toEqual(UNAVAILABLE);
    }

    // A license key the in-process cache has not seen needs the database too.
    const unknownKey = `svc_biz_${randomBytes(32).toString('hex')}`;
    const keyCheck = await call(`${url}/api/license`, 'GET', withKey(unknownKey));
    expect(keyCheck.status).toBe(503);
    expect(keyCheck.retryAfter).toBe('5');
    expect(keyCheck.body).toEqual(UNAVAILABLE);

    // A login needs the users table.
    const loginAttempt = await call(
      `${url}/identity/token`,
      'POST',
      {},
      new URLSearchParams({ grant_type: 'password', username: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
    );
    expect(loginAttempt.status).toBe(503);
    expect(loginAttempt.retryAfter).toBe('5');
    expect(loginAttempt.body).toEqual(UNAVAILABLE);

    // A second portal that has not loaded its token-signing keys yet: the outage must still
    // be a 503, not a 401 that would send the client to log in again.
    const fresh = coldPortal!;
    const cold = await call(`${fresh.url}/api/licenses`, 'GET', withToken(token));
    expect(cold.status).toBe(503);
    expect(cold.body).toEqual(UNAVAILABLE);

    // Liveness never touches the database.
    const health = await call(`${url}/api/health`, 'GET');
    expect(health.status).toBe(200);
    expect((health.body as { status: string }).status).toBe('ok');

    await controlEmbeddedPostgres(dir, 'start', port);

    const seen: number[] = [];
    let recovered: Answer | null = null;
    for (let i = 0; i < 20; i++) {
      const res = await call(`${url}/api/licenses`, 'GET', withToken(token));
      seen.push(res.status);
      if (res.status === 200) {
        recovered = res;
        break;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    // Only "unavailable" on the way back, then the data as before, without a portal restart.
    expect(seen.slice(0, -1).every((s) => s === 503)).toBe(true);
    expect(recovered?.status).toBe(200);
    expect((recovered!.body as { licenses: { id: string }[] }).licenses.map((l) => l.id)).toEqual([licenseId]);

    // Writes work again too, and the key created before the outage still validates.
    const again = await call(`${url}/api/license`, 'GET', withKey(licenseKey));
    expect(again.status).toBe(200);
    expect((again.body as { valid: boolean; tier: string }).valid).toBe(true);
    const created = await call(
      `${url}/api/licenses`,
      'POST',
      { ...withToken(token), 'content-type': 'application/json' },
      JSON.stringify({ tier: 'msp', client_id: 'outage', name: 'after the outage' }),
    );
    expect(created.status).toBe(201);
  });
});
