import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '@svc/protocol/node';
import { runCli } from '@svc/test-support/cli';
import { createLicense, createScopedUser, type LicenseFixture, type ScopedUser } from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { createTestDatabase, KEY_ENCRYPTION_KEY, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { blobObjects, newSessionId, postUpload, sessionDoc, sessionParts } from '@svc/test-support/upload';
import { authenticateManifest } from '../src/operations/backup/authentication.ts';
import { type ArchiveEntry, editEntry, entryOf, manifestOf, packArchive, unpackArchive } from './helpers/archive.ts';

/**
 * An archive holds no share token in clear, and restore refuses an archive
 * changed after it was written (docs/backup.md, docs/deployment.md "Backups").
 * The review's attack: a member made an admin in the archive's users table, its checksums
 * recomputed. Backups and restores run as the operator runs them, through the CLI.
 */

const CLI = path.resolve(import.meta.dirname, '../src/operations/backup/cli.ts');
const KEK = Buffer.from(KEY_ENCRYPTION_KEY, 'hex');
const EDITED =
  'the archive was changed after it was written: manifest.json does not match its authentication code in manifest.hmac (an edited entry with recomputed checksums, or an edited manifest); restore refused\n';

describe('authenticated backups', () => {
  let source: TestPortal;
  let license: LicenseFixture;
  let member: ScopedUser;
  let sessionId: string;
  /** The upload's token, and a session's token after a rotation (and the one it replaced). */
  let uploaded: string;
  let rotated: string;
  let replaced: string;
  let archive: string;
  let entries: ArchiveEntry[];
  const closers: (() => Promise<unknown>)[] = [];
  const dirs: string[] = [];
  const scratch = async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-backup-auth-'));
    dirs.push(dir);
    return dir;
  };
  const envOf = (databaseUrl: string, dataDir: string, key = KEY_ENCRYPTION_KEY) => ({
    DATABASE_URL: databaseUrl,
    SVC_DATA_DIR: dataDir,
    SVC_IDENTITY_KEY_ENCRYPTION_KEY: key,
  });
  const query = async (url: string, text: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(text)).rows;
    } finally {
      await client.end();
    }
  };
  const upload = async () => {
    const id = newSessionId();
    const res = await postUpload(source.url, license.key, sessionParts(sessionDoc('session-minimal.json', id)));
    expect(res.status, res.text).toBe(200);
    return { id, token: res.body.share_token as string };
  };
  /** An archive of `entries` in a new file; restore of it into a fresh database and data directory. */
  const restoreOf = async (edited: ArchiveEntry[], args: string[] = []) => {
    const file = path.join(await scratch(), 'edited.tar');
    await packArchive(edited, file);
    const target = { url: await createTestDatabase(), dir: await scratch() };
    const res = await runCli(process.execPath, [CLI, 'restore', ...args, file], { env: envOf(target.url, target.dir) });
    return { ...res, target };
  };
  /** The restore left nothing: no schema, no object. */
  const expectUntouched = async (target: { url: string; dir: string }) => {
    expect(await query(target.url, `SELECT to_regclass('users') AS t`)).toEqual([{ t: null }]);
    expect(await blobObjects(target.dir)).toEqual([]);
  };
  /** The member's row in the archive's users table made an admin's: the review's edit. */
  const promoteMember = (data: Buffer) => {
    const lines = data.toString('utf8').split('\n');
    const at = lines.findIndex((l) => l.includes(member.email));
    expect(lines[at]).toContain('\tmember\t');
    lines[at] = (lines[at] as string).replace('\tmember\t', '\tadmin\t');
    return Buffer.from(lines.join('\n'));
  };

  beforeAll(async () => {
    source = await startTestPortal();
    closers.push(() => source.close());
    license = await createLicense(source, { tier: 'business' });
    member = await createScopedUser(source, [license.record.client_id]);
    ({ id: sessionId, token: uploaded } = await upload());
    const other = await upload();
    replaced = other.token;
    const rotation = await http(source.url, 'POST', `/api/sessions/share?session=${other.id}`, {
      headers: withToken(await source.adminToken()),
    });
    expect(rotation.status, rotation.text).toBe(200);
    rotated = rotation.body.share_token;
    archive = path.join(await scratch(), 'portal.tar');
    const made = await runCli(process.execPath, [CLI, 'backup', archive], {
      env: envOf(source.databaseUrl, source.dataDir),
    });
    expect(made.stderr).toBe('');
    expect(made.code).toBe(0);
    entries = await unpackArchive(archive);
  });

  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    for (const dir of dirs) await fs.rm(dir, { recursive: true, force: true });
  });

  it('holds no share token in clear: grep of the unpacked archive finds none, only their hashes', async () => {
    const dir = await scratch();
    const unpacked = await runCli('tar', ['-xf', archive, '-C', dir]);
    expect(unpacked.code).toBe(0);
    const grep = (text: string) => runCli('grep', ['-rlF', text, dir]);
    // The search works: the session id is in the sessions table.
    expect((await grep(sessionId)).stdout).toContain(path.join(dir, 'database/sessions.copy'));
    for (const token of [uploaded, rotated, replaced, uploaded.toUpperCase()]) {
      const found = await grep(token);
      expect(found.stdout).toBe('');
      expect(found.code).toBe(1);
    }
    expect((await grep(sha256Hex(uploaded))).stdout).toBe(`${path.join(dir, 'database/share_tokens.copy')}\n`);
    expect((await grep(sha256Hex(rotated))).code).toBe(0);
    // The listing still shows the links: the portal keeps a copy sealed under its key.
    const listing = await http(source.url, 'GET', `/api/sessions?session=${sessionId}`, {
      headers: withToken(await source.adminToken()),
    });
    expect(listing.status, listing.text).toBe(200);
    expect(listing.body.session.share_url).toBe(`http://portal.test/share/?token=${uploaded}`);
  });

  it('refuses an archive with a member made an admin and its checksums recomputed: exit 2, the reason, nothing written', async () => {
    const edited = editEntry(entries, 'database/users.copy', promoteMember);
    const res = await restoreOf(edited);
    expect(res.stderr).toBe(EDITED);
    expect(res.code).toBe(2);
    await expectUntouched(res.target);
    const verify = await restoreOf(edited, ['--verify']);
    expect(verify.stderr).toBe(EDITED);
    expect(verify.code).toBe(2);

    // The edit is otherwise a well-formed archive: only the code under the operator's key is
    // missing (with it, the member would be restored an admin).
    const manifest = entryOf(edited, 'manifest.json').data;
    const signed = edited.map((e) =>
      e.name === 'manifest.hmac' ? { name: e.name, data: authenticateManifest(KEK, manifest) } : e,
    );
    const signedRestore = await restoreOf(signed);
    expect(signedRestore.stderr).toBe('');
    expect(signedRestore.code).toBe(0);
    expect(await query(signedRestore.target.url, `SELECT role FROM users WHERE email = '${member.email}'`)).toEqual([
      { role: 'admin' },
    ]);
  });

  it('refuses an edited manifest, a missing code, and an archive downgraded to format version 1 even when unauthenticated ones are allowed', async () => {
    const manifest = manifestOf(entries);
    manifest.entries = manifest.entries.filter((e) => !e.name.startsWith('objects/'));
    const trimmed = entries
      .filter((e) => !e.name.startsWith('objects/'))
      .map((e) => (e.name === 'manifest.json' ? { name: e.name, data: Buffer.from(JSON.stringify(manifest)) } : e));
    const lessObjects = await restoreOf(trimmed);
    expect(lessObjects.stderr).toBe(EDITED);
    expect(lessObjects.code).toBe(2);

    const noCode = await restoreOf(entries.filter((e) => e.name !== 'manifest.hmac'));
    expect(noCode.stderr).toBe(
      'manifest.hmac is missing after manifest.json: the archive cannot be authenticated; restore refused\n',
    );
    expect(noCode.code).toBe(2);

    const v1 = { ...manifestOf(entries), format_version: 1 };
    const downgraded = editEntry(entries, 'database/users.copy', promoteMember)
      .filter((e) => e.name !== 'manifest.hmac')
      .map((e) => (e.name === 'manifest.json' ? { name: e.name, data: Buffer.from(JSON.stringify(v1)) } : e));
    const res = await restoreOf(downgraded, ['--allow-unauthenticated']);
    expect(res.stderr).toBe(
      `the archive has no manifest.hmac, yet its schema ${v1.schema_migration} is one whose backups always have one: it was changed after it was written; restore refused\n`,
    );
    expect(res.code).toBe(2);
    await expectUntouched(res.target);
  });

  it('verifies and restores the untouched archive; its share links open on the restored portal, the replaced one does not', async () => {
    const verify = await runCli(process.execPath, [CLI, 'restore', '--verify', archive], {
      env: envOf(await createTestDatabase(), await scratch()),
    });
    expect(verify.stderr).toBe('');
    expect(verify.stdout).toBe(
      `${archive}: ${manifestOf(entries).entries.length} entries match the manifest and the archive is authentic\n`,
    );
    expect(verify.code).toBe(0);

    const target = { url: await createTestDatabase(), dir: await scratch() };
    const restored = await runCli(process.execPath, [CLI, 'restore', archive], { env: envOf(target.url, target.dir) });
    expect(restored.stderr).toBe('');
    expect(restored.code).toBe(0);
    const second = await startTestPortal({ databaseUrl: target.url, env: { SVC_DATA_DIR: target.dir } });
    closers.push(() => second.close());
    for (const token of [uploaded, rotated]) {
      expect((await http(second.url, 'GET', `/share/?token=${token}`)).status).toBe(200);
      const api = await http(second.url, 'GET', `/api/share?token=${token}`);
      expect(api.status, api.text).toBe(200);
    }
    expect((await http(second.url, 'GET', `/api/share?token=${uploaded}`)).body.session_id).toBe(sessionId);
    expect(await http(second.url, 'GET', `/api/share?token=${replaced}`)).toMatchObject({
      status: 404,
      body: { error: 'Share link not found' },
    });
    const download = await fetch(`${second.url}/api/download?session=${sessionId}&token=${uploaded}`);
    expect(download.status).toBe(200);
    expect((await http(second.url, 'GET', '/api/license', { headers: withKey(license.key) })).body.valid).toBe(true);
  });

  it('refuses a restore under another key before reading an entry, and a backup under a key that does not open the database', async () => {
    const target = { url: await createTestDatabase(), dir: await scratch() };
    const other = 'ab'.repeat(32);
    const res = await runCli(process.execPath, [CLI, 'restore', archive], {
      env: envOf(target.url, target.dir, other),
    });
    expect(res.stderr).toMatch(
      /^the archive is authenticated with another key \(key id [0-9a-f]{16}, this key's is [0-9a-f]{16}\): restore with SVC_IDENTITY_KEY_ENCRYPTION_KEY \(or the data directory's identity-key\) of the portal the backup was taken from\n$/,
    );
    expect(res.code).toBe(2);
    await expectUntouched(target);

    const file = path.join(await scratch(), 'other-key.tar');
    const backup = await runCli(process.execPath, [CLI, 'backup', file], {
      env: envOf(source.databaseUrl, source.dataDir, other),
    });
    expect(backup.stderr).toMatch(
      /^SVC_IDENTITY_KEY_ENCRYPTION_KEY \(or the data directory's identity-key\) does not open the database's signing key \S+: back up with the key the portal runs with\n$/,
    );
    expect(backup.code).toBe(2);
    await expect(fs.access(file)).rejects.toThrow(/ENOENT/);
  });
});
