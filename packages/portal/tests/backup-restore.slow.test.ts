import fs from 'node:fs/promises';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '@svc/test-support/cli';
import { createLicense, heartbeatBody, type LicenseFixture, newAgentId } from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { createTestDatabase, KEY_ENCRYPTION_KEY, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { blobObjects, newSessionId, postUpload, sessionDoc, sessionParts } from '@svc/test-support/upload';
import { testTempDir } from '@svc/test-support/temp-dirs';
import { until } from '@svc/test-support/wait';
import { FsBlobStore } from '../src/blobs/fs-store.ts';
import type { BlobStore } from '../src/blobs/store.ts';
import { openDatabase } from '../src/db/pool.ts';
import { createLogger } from '../src/logging.ts';
import { createBackup } from '../src/operations/backup/backup.ts';
import { restoreBackup, verifyArchive } from '../src/operations/backup/restore.ts';

/** npm run backup / restore (docs/backup.md): one consistent archive, restored elsewhere. */

const CLI = path.resolve(import.meta.dirname, '../src/operations/backup/cli.ts');
const KEK = Buffer.from(KEY_ENCRYPTION_KEY, 'hex');
const FILES = ['session_results.json', 'pipeline.log', 'report.html'] as const;

interface Upload {
  id: string;
  key: string;
  /** What the backup was doing when the upload started and when its answer came. */
  started: Phase;
  answered: Phase | null;
}
type Phase = 'before' | 'during' | 'after';

async function download(portal: TestPortal, key: string, id: string, file: string): Promise<Buffer | number> {
  const res = await fetch(`${portal.url}/api/download?session=${id}&file=${file}`, { headers: withKey(key) });
  return res.status === 200 ? Buffer.from(await res.arrayBuffer()) : res.status;
}

async function uploadSession(portal: TestPortal, key: string, id: string): Promise<void> {
  const parts = sessionParts(sessionDoc('session-minimal.json', id), {
    log: `log of ${id}\n`.repeat(200),
    report: `<!doctype html><html><body>${id}</body></html>`,
  });
  const res = await postUpload(portal.url, key, parts);
  if (res.status !== 200) throw new Error(`upload ${id}: ${res.status} ${res.text}`);
}

describe('backup and restore', () => {
  let source: TestPortal;
  const closers: (() => Promise<unknown>)[] = [];
  // Removed when the file ends (test-support/temp-dirs.ts).
  const scratch = () => testTempDir('svc-backup-test-');
  const pools = (url: string) => {
    const handle = openDatabase(url, { max: 4, logger: createLogger('silent') });
    closers.push(() => handle.close());
    return handle;
  };
  const rowsIn = async (url: string, table: string) => {
    const { pool } = pools(url);
    return Number((await pool.query(`SELECT count(*) FROM ${table}`)).rows[0].count);
  };
  let msp: LicenseFixture;
  let pro: LicenseFixture;
  let agentId: string;
  let webhookId: string;

  beforeAll(async () => {
    source = await startTestPortal();
    closers.push(() => source.close());
    msp = await createLicense(source, { tier: 'msp' });
    pro = await createLicense(source, { tier: 'professional' });
    agentId = newAgentId();
    const beat = await http(source.url, 'POST', '/api/health', {
      headers: withKey(msp.key),
      json: heartbeatBody(agentId),
    });
    expect(beat.status, beat.text).toBe(200);
    const hook = await http(source.url, 'POST', '/api/webhooks', {
      headers: withToken(await source.adminToken()),
      // Disabled: a row to restore, never a delivery to that public address.
      json: { url: 'https://93.184.215.14/hooks/svc', event_types: ['scan_completed'], enabled: false },
    });
    expect(hook.status, hook.text).toBe(201);
    webhookId = hook.body.subscription.id;
    for (const key of [msp.key, pro.key]) for (let i = 0; i < 3; i++) await uploadSession(source, key, newSessionId());
  });
  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
  });

  it('takes a new snapshot when a session is deleted after the snapshot, and the archive leaves it out', async () => {
    const id = newSessionId();
    await uploadSession(source, pro.key, id);
    const { pool } = pools(source.databaseUrl);
    const files = (await pool.query('SELECT files FROM sessions WHERE session_id = $1', [id])).rows[0].files;
    const keys = (Object.values(files) as { key: string }[]).map((f) => `objects/${f.key}`);
    const token = await source.adminToken();
    let deleted = false;
    const retries: string[] = [];
    // The portal's own store; before the first read the session is deleted through the API.
    const blobs: Pick<BlobStore, 'get'> = {
      async get(key) {
        if (!deleted) {
          deleted = true;
          const res = await http(source.url, 'DELETE', `/api/sessions?session=${id}`, { headers: withToken(token) });
          expect(res.status, res.text).toBe(200);
        }
        return source.ctx.blobs.get(key);
      },
    };
    const archive = path.join(await scratch(), 'portal.tar');
    await createBackup({
      pool,
      blobs,
      archive,
      portalVersion: source.ctx.version,
      keyEncryptionKey: KEK,
      onRetry: (err) => retries.push(err.message),
    });
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatch(/^blob not found: /);
    const manifest = await verifyArchive(archive, { keyEncryptionKey: KEK });
    const names = new Set(manifest.entries.map((e) => e.name));
    expect(keys.filter((k) => names.has(k))).toEqual([]);
    expect(manifest.tables.find((t) => t.name === 'sessions')?.rows).toBe(await rowsIn(source.databaseUrl, 'sessions'));
  });

  it('refuses a damaged archive naming the entry, and leaves the target empty', async () => {
    const dir = await scratch();
    const archive = path.join(dir, 'portal.tar');
    await createBackup({
      pool: pools(source.databaseUrl).pool,
      blobs: source.ctx.blobs,
      archive,
      portalVersion: '1',
      keyEncryptionKey: KEK,
    });
    // Edited inside the compression (as someone rewriting the archive would), so the manifest's check must find it.
    const bytes = zlib.zstdDecompressSync(await fs.readFile(archive));
    const { name, offset } = firstObject(bytes);
    bytes[offset] = (bytes[offset] as number) ^ 0xff;
    const damaged = path.join(dir, 'damaged.tar');
    await fs.writeFile(damaged, zlib.zstdCompressSync(bytes));

    const targetUrl = await createTestDatabase();
    const targetDir = await scratch();
    const res = await runCli(process.execPath, [CLI, 'restore', damaged], {
      env: { DATABASE_URL: targetUrl, SVC_DATA_DIR: targetDir, SVC_IDENTITY_KEY_ENCRYPTION_KEY: KEY_ENCRYPTION_KEY },
    });
    expect(res.stderr).toContain(`entry ${name} is damaged`);
    expect(res.code).toBe(2);
    expect(await blobObjects(targetDir)).toEqual([]);
    const { pool } = pools(targetUrl);
    expect((await pool.query(`SELECT to_regclass('sessions') AS t`)).rows[0].t).toBe(null);

    // The intact archive restores into that same target afterwards.
    const ok = await runCli(process.execPath, [CLI, 'restore', archive], {
      env: { DATABASE_URL: targetUrl, SVC_DATA_DIR: targetDir, SVC_IDENTITY_KEY_ENCRYPTION_KEY: KEY_ENCRYPTION_KEY },
    });
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(await rowsIn(targetUrl, 'sessions')).toBe(await rowsIn(source.databaseUrl, 'sessions'));
  });

  it('refuses a target that holds a portal, a foreign key-encryption key, and an existing archive path', async () => {
    const dir = await scratch();
    const archive = path.join(dir, 'portal.tar');
    const env = {
      DATABASE_URL: source.databaseUrl,
      SVC_DATA_DIR: source.dataDir,
      SVC_IDENTITY_KEY_ENCRYPTION_KEY: KEY_ENCRYPTION_KEY,
    };
    const made = await runCli(process.execPath, [CLI, 'backup', archive], { env });
    expect(made.stderr).toBe('');
    expect(made.code).toBe(0);
    const before = await rowsIn(source.databaseUrl, 'sessions');

    const into = await runCli(process.execPath, [CLI, 'restore', archive], { env });
    expect(into.code).toBe(2);
    expect(into.stderr).toMatch(
      /^the target database already holds a portal \(rows in .*sessions.*\); restore only into an empty database/,
    );
    expect(await rowsIn(source.databaseUrl, 'sessions')).toBe(before);

    const again = await runCli(process.execPath, [CLI, 'backup', archive], { env });
    expect(again.code).toBe(2);
    expect(again.stderr).toBe(`${archive} already exists; a backup never overwrites a file\n`);

    const otherKey = await runCli(process.execPath, [CLI, 'restore', archive], {
      env: {
        DATABASE_URL: await createTestDatabase(),
        SVC_DATA_DIR: await scratch(),
        SVC_IDENTITY_KEY_ENCRYPTION_KEY: 'ab'.repeat(32),
      },
    });
    expect(otherKey.code).toBe(2);
    expect(otherKey.stderr).toMatch(
      /^the archive is authenticated with another key \(key id [0-9a-f]{16}, this key's is [0-9a-f]{16}\): restore with SVC_IDENTITY_KEY_ENCRYPTION_KEY \(or the data directory's identity-key\) of the portal the backup was taken from\n$/,
    );
  });

  it('restores a portal backed up under upload load: every session byte-identical, keys, tokens, agents and webhooks', async () => {
    const dir = await scratch();
    const archive = path.join(dir, 'portal.tar');
    const uploads: Upload[] = [];
    let phase: Phase = 'before';
    let stop = false;
    // Two uploaders, bounded: they run until told to stop, 150 uploads each at most.
    const uploader = async (key: string) => {
      for (let i = 0; i < 150 && !stop; i++) {
        const u: Upload = { id: newSessionId(), key, started: phase, answered: null };
        uploads.push(u);
        await uploadSession(source, key, u.id);
        u.answered = phase;
      }
    };
    const load = Promise.all([uploader(msp.key), uploader(pro.key)]);
    await until(() => uploads.filter((u) => u.answered !== null).length >= 4);
    phase = 'during';
    const result = await createBackup({
      pool: pools(source.databaseUrl).pool,
      blobs: source.ctx.blobs,
      archive,
      portalVersion: source.ctx.version,
      keyEncryptionKey: KEK,
    });
    phase = 'after';
    await until(() => uploads.filter((u) => u.started === 'after' && u.answered !== null).length >= 2);
    stop = true;
    await load;

    // A second portal on the restored state: a fresh database and a fresh data directory.
    const restoredUrl = await createTestDatabase();
    const restoredDir = await scratch();
    const restored = await restoreBackup({
      ...pools(restoredUrl),
      blobs: await initStore(restoredDir),
      archive,
      keyEncryptionKey: KEK,
    });
    expect(restored.objects).toBe(result.objects);
    const second = await startTestPortal({ databaseUrl: restoredUrl, env: { SVC_DATA_DIR: restoredDir } });
    closers.push(() => second.close());

    const { pool } = pools(restoredUrl);
    const rows = (
      await pool.query<{ session_id: string; files: Record<string, unknown> }>('SELECT session_id, files FROM sessions')
    ).rows;
    const present = new Set(rows.map((r) => r.session_id));
    expect(present.size).toBeGreaterThanOrEqual(6 + 4);
    const keyOf = new Map(uploads.map((u) => [u.id, u.key]));
    // Every session of the archive downloads byte-identical to the source's.
    for (const id of present) {
      const key = keyOf.get(id) ?? (await keyFromSource(source, id, [msp, pro]));
      for (const file of FILES) {
        const want = await download(source, key, id, file);
        expect(Buffer.isBuffer(want), `${id} ${file}`).toBe(true);
        expect(await download(second, key, id, file), `${id} ${file}`).toEqual(want);
      }
    }
    // Answered before the snapshot: there. Started after the backup: absent. In between: all or nothing.
    for (const u of uploads) {
      if (u.answered === 'before') expect(present.has(u.id), u.id).toBe(true);
      if (u.started === 'after') expect(present.has(u.id), u.id).toBe(false);
      if (!present.has(u.id)) expect(await download(second, u.key, u.id, 'session_results.json')).toBe(404);
    }
    // No object without its row: the store holds exactly the restored rows' files.
    const referenced = rows.flatMap((r) => Object.values(r.files) as { key: string }[]).map((f) => f.key);
    expect(await blobObjects(restoredDir)).toEqual([...referenced].sort());

    for (const key of [msp.key, pro.key]) {
      const res = await http(second.url, 'GET', '/api/license', { headers: withKey(key) });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ valid: true, reason: 'ok' });
    }
    // A token the first portal signed is valid on the second (the signing key came along).
    const token = await source.adminToken();
    const agents = await http(second.url, 'GET', '/api/health?agents=true', { headers: withToken(token) });
    expect(agents.status, agents.text).toBe(200);
    expect(JSON.stringify(agents.body)).toContain(agentId);
    const hooks = await http(second.url, 'GET', '/api/webhooks', { headers: withToken(token) });
    expect(hooks.status).toBe(200);
    expect(hooks.body.subscriptions.map((s: { id: string }) => s.id)).toContain(webhookId);
    // The existing agent keeps heartbeating on the restored portal.
    const beat = await http(second.url, 'POST', '/api/health', {
      headers: withKey(msp.key),
      json: heartbeatBody(agentId),
    });
    expect(beat.status, beat.text).toBe(200);
  });
});

async function initStore(dataDir: string): Promise<FsBlobStore> {
  const store = new FsBlobStore(path.join(dataDir, 'blobs'));
  await store.init();
  return store;
}

/** The sessions of beforeAll were uploaded before the loop recorded keys: find which key sees one. */
async function keyFromSource(portal: TestPortal, id: string, keys: LicenseFixture[]): Promise<string> {
  for (const k of keys) if (Buffer.isBuffer(await download(portal, k.key, id, 'session_results.json'))) return k.key;
  throw new Error(`no key downloads ${id}`);
}

/** The name and first data byte of the archive's first objects/ entry (ustar, or pax for long names). */
function firstObject(tar: Buffer): { name: string; offset: number } {
  let pax: string | null = null;
  for (let at = 0; at + 512 <= tar.length; ) {
    const field = (from: number, len: number) =>
      tar
        .subarray(at + from, at + from + len)
        .toString('utf8')
        .replace(/\0.*$/s, '');
    const size = Number.parseInt(field(124, 12).trim() || '0', 8);
    const type = field(156, 1);
    const data = at + 512;
    if (type === 'x') {
      pax = /\d+ path=([^\n]+)\n/.exec(tar.subarray(data, data + size).toString('utf8'))?.[1] ?? null;
    } else {
      const prefix = field(345, 155);
      const name = pax ?? (prefix ? `${prefix}/${field(0, 100)}` : field(0, 100));
      pax = null;
      if (name.startsWith('objects/') && size > 0) return { name, offset: data };
    }
    at = data + Math.ceil(size / 512) * 512;
  }
  throw new Error('no object entry in the archive');
}
