import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '@svc/test-support/cli';
import { http, withKey, withToken } from '@svc/test-support/http';
import { freePort } from '@svc/test-support/ports';
import { ADMIN_EMAIL, ADMIN_PASSWORD, login } from '@svc/test-support/portal';
import { newSessionId, postUpload, sessionDoc, sessionParts } from '@svc/test-support/upload';
import { KEY_FILE } from '../src/identity/key-encryption.ts';
import { killAll, makeDataDir, startPortalProcess, stopProcess } from '@svc/test-support/portal-process';

/**
 * The default deployment: the embedded PostgreSQL under the data directory. The backup reads a
 * running portal's server; the restore starts a server of its own in a fresh data directory.
 */

const CLI = path.resolve(import.meta.dirname, '../src/operations/backup/cli.ts');
const ADMIN = { SVC_ADMIN_EMAIL: ADMIN_EMAIL, SVC_ADMIN_PASSWORD: ADMIN_PASSWORD };

describe('backup and restore with the embedded database', () => {
  afterAll(async () => {
    await killAll();
  });

  it('backs up a running portal and restores into a fresh data directory holding its identity-key', async () => {
    const dataDir = await makeDataDir('svc-backup-src-');
    const first = await startPortalProcess({ dataDir, env: ADMIN });
    const admin = await login(first.url, ADMIN_EMAIL, ADMIN_PASSWORD);
    const created = await http(first.url, 'POST', '/api/licenses', {
      headers: withToken(admin),
      json: { tier: 'business', client_id: 'acme', name: 'acme' },
    });
    expect(created.status, created.text).toBe(201);
    const key: string = created.body.license.plaintext_key;
    const id = newSessionId();
    const upload = await postUpload(first.url, key, sessionParts(sessionDoc('session-complete.json', id)));
    expect(upload.status, upload.text).toBe(200);
    const original = await (
      await fetch(`${first.url}/api/download?session=${id}`, { headers: withKey(key) })
    ).arrayBuffer();

    const archive = path.join(await makeDataDir('svc-backup-archive-'), 'portal.tar');
    const source = { SVC_DATA_DIR: dataDir, SVC_EMBEDDED_PG_PORT: String(first.pgPort) };
    const made = await runCli(process.execPath, [CLI, 'backup', archive], { env: source });
    expect(made.stderr).toBe('');
    expect(made.code).toBe(0);
    await stopProcess(first);

    const target = {
      SVC_DATA_DIR: await makeDataDir('svc-backup-dst-'),
      SVC_EMBEDDED_PG_PORT: String(await freePort()),
    };
    // Without the key that seals the signing key, nothing is started or written.
    const keyless = await runCli(process.execPath, [CLI, 'restore', archive], { env: target });
    expect(keyless.code).toBe(2);
    expect(keyless.stderr).toBe(
      `SVC_IDENTITY_KEY_ENCRYPTION_KEY is unset and ${path.join(target.SVC_DATA_DIR, KEY_FILE)} does not exist: set the key, or copy ${KEY_FILE} from the data directory of the portal the backup was taken from\n`,
    );
    expect(await fs.readdir(target.SVC_DATA_DIR)).toEqual([]);

    await fs.copyFile(path.join(dataDir, KEY_FILE), path.join(target.SVC_DATA_DIR, KEY_FILE));
    const restored = await runCli(process.execPath, [CLI, 'restore', archive], { env: target, timeoutMs: 120_000 });
    expect(restored.stderr).toBe('');
    expect(restored.code).toBe(0);

    const second = await startPortalProcess({
      dataDir: target.SVC_DATA_DIR,
      pgPort: Number(target.SVC_EMBEDDED_PG_PORT),
    });
    const res = await fetch(`${second.url}/api/download?session=${id}`, { headers: withKey(key) });
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer())).toEqual(Buffer.from(original));
    const license = await http(second.url, 'GET', '/api/license', { headers: withKey(key) });
    expect(license.body).toMatchObject({ valid: true, tier: 'business', client_id: 'acme' });
    // The admin's token from the first portal, and its password, both work on the restored one.
    expect((await http(second.url, 'GET', '/api/licenses', { headers: withToken(admin) })).status).toBe(200);
    await login(second.url, ADMIN_EMAIL, ADMIN_PASSWORD);
  });
});
