import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '@svc/protocol/node';
import { runCli } from '@svc/test-support/cli';
import { http, withToken } from '@svc/test-support/http';
import { createTestDatabase, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { tableRows, unpackArchive } from './helpers/archive.ts';

/**
 * Share tokens stored before migration 0020: the pre-records fixture is a
 * backup that an earlier portal wrote (tests/fixtures/pre-records/README.md), so it holds its
 * share tokens in clear and has no authentication code. Restored as an operator would, the tokens
 * of that portal still open their share pages once this portal has started on it, and nothing
 * holds them in clear any more: not the database, not a backup taken afterwards.
 */

const FIXTURE = path.resolve(import.meta.dirname, 'fixtures/pre-records');
const CLI = path.resolve(import.meta.dirname, '../src/operations/backup/cli.ts');
/** Test-only: the key-encryption key of the portal that took the backup (README.md there). */
const KEK = readFileSync(path.join(FIXTURE, 'key-encryption-key.txt'), 'utf8').trim();
const WARNING = (archive: string) =>
  `warning: ${archive} is not authenticated (written before backups were): it was accepted without a check for edits (--allow-unauthenticated)\n`;

describe('share tokens of a portal from before migration 0020', () => {
  let archive: string;
  /** session id → the share token the old portal stored for it, read from its archive. */
  let tokens: Map<string, string>;
  let databaseUrl: string;
  let dataDir: string;
  let portal: TestPortal;
  const closers: (() => Promise<unknown>)[] = [];
  const dirs: string[] = [];
  const scratch = async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-share-migration-'));
    dirs.push(dir);
    return dir;
  };
  const env = (url: string, dir: string, key = KEK) => ({
    DATABASE_URL: url,
    SVC_DATA_DIR: dir,
    SVC_IDENTITY_KEY_ENCRYPTION_KEY: key,
  });
  const cli = (args: string[], e: Record<string, string>) =>
    runCli(process.execPath, [CLI, ...args], { env: e, timeoutMs: 120_000 });
  const query = async (text: string) => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      return (await client.query(text)).rows;
    } finally {
      await client.end();
    }
  };

  beforeAll(async () => {
    archive = path.join(await scratch(), 'portal.tar');
    await fs.writeFile(archive, gunzipSync(readFileSync(path.join(FIXTURE, 'portal-58b7942.tar.gz'))));
    const rows = tableRows(await unpackArchive(archive), 'share_tokens');
    tokens = new Map(rows.map((r) => [r['session_id'] as string, r['token'] as string]));
    databaseUrl = await createTestDatabase();
    dataDir = await scratch();
  });

  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    for (const dir of dirs) await fs.rm(dir, { recursive: true, force: true });
  });

  it('restores the unauthenticated archive only when allowed, and only under the key of its portal', async () => {
    expect(tokens.size).toBe(5);
    for (const token of tokens.values()) expect(token).toMatch(/^[0-9a-f]{64}$/);

    const refused = await cli(['restore', archive], env(databaseUrl, dataDir));
    expect(refused.stderr).toBe(
      'the archive was written before backups were authenticated (format version 1, schema 0016_findings_kev_epss), so edits to it cannot be detected; if it comes from a place only you can write, restore it with --allow-unauthenticated\n',
    );
    expect(refused.code).toBe(2);

    // No code to check a key against: the sealed signing key is what refuses another key.
    const otherKey = await cli(['restore', '--allow-unauthenticated', archive], {
      ...env(await createTestDatabase(), await scratch()),
      SVC_IDENTITY_KEY_ENCRYPTION_KEY: 'cd'.repeat(32),
    });
    expect(otherKey.stderr).toMatch(
      /^SVC_IDENTITY_KEY_ENCRYPTION_KEY \(or the data directory's identity-key\) does not open the archive's signing key \S+: restore with the key of the portal the backup was taken from\n$/,
    );
    expect(otherKey.code).toBe(2);

    const restored = await cli(['restore', '--allow-unauthenticated', archive], env(databaseUrl, dataDir));
    expect(restored.stderr).toBe(WARNING(archive));
    expect(restored.code).toBe(0);
  });

  it('refuses to back up the restored database while its tokens are in clear', async () => {
    const file = path.join(await scratch(), 'too-early.tar');
    const res = await cli(['backup', file], env(databaseUrl, dataDir));
    expect(res.stderr).toBe(
      'the database holds 5 share tokens in clear (schema 0016_findings_kev_epss): start the portal of this version once, which seals them, then back up\n',
    );
    expect(res.code).toBe(2);
    await expect(fs.access(file)).rejects.toThrow(/ENOENT/);
  });

  it('after the start, every old token opens its share page and download, and the database keeps only hashes and sealed copies', async () => {
    portal = await startTestPortal({
      databaseUrl,
      env: { SVC_DATA_DIR: dataDir, SVC_IDENTITY_KEY_ENCRYPTION_KEY: KEK },
    });
    closers.push(() => portal.close());
    const stored = await query('SELECT session_id, token, token_hash, token_sealed FROM share_tokens ORDER BY 1');
    expect(stored.map((r) => [r.session_id, r.token, r.token_hash])).toEqual(
      [...tokens].sort().map(([id, token]) => [id, null, sha256Hex(token)]),
    );
    for (const r of stored) expect(r.token_sealed).toMatch(/^v1\./);
    // The audit log's upload events keep their links without the tokens.
    const audited = await query(
      "SELECT data->>'share_url' AS url FROM audit_events WHERE event_type = 'scan_completed'",
    );
    expect(audited.length).toBeGreaterThanOrEqual(tokens.size);
    for (const r of audited) expect(r.url).toBe('http://127.0.0.1:18080/share/?token=[redacted]');

    const admin = withToken(await portal.adminToken());
    for (const [id, token] of tokens) {
      const page = await http(portal.url, 'GET', `/share/?token=${token}`);
      expect(page.status, id).toBe(200);
      const api = await http(portal.url, 'GET', `/api/share?token=${token}`);
      expect(api.status, api.text).toBe(200);
      expect(api.body.session_id).toBe(id);
      const file = await fetch(`${portal.url}/api/download?session=${id}&token=${token}`);
      expect(file.status, id).toBe(200);
      // The console shows the same link as before (its sealed copy, opened).
      const detail = await http(portal.url, 'GET', `/api/sessions?session=${id}`, { headers: admin });
      expect(detail.body.session.share_url).toBe(`http://portal.test/share/?token=${token}`);
    }
  });

  it('a backup taken now holds none of the old tokens, and restores with them working', async () => {
    const file = path.join(await scratch(), 'after.tar');
    const made = await cli(['backup', file], env(databaseUrl, dataDir));
    expect(made.stderr).toBe('');
    expect(made.code).toBe(0);
    const dir = await scratch();
    expect((await runCli('tar', ['-xf', file, '-C', dir])).code).toBe(0);
    for (const token of tokens.values()) {
      const found = await runCli('grep', ['-rlF', token, dir]);
      expect(found.stdout).toBe('');
      expect(found.code).toBe(1);
    }

    const target = { url: await createTestDatabase(), dir: await scratch() };
    const restored = await cli(['restore', file], env(target.url, target.dir));
    expect(restored.stderr).toBe('');
    expect(restored.code).toBe(0);
    const second = await startTestPortal({
      databaseUrl: target.url,
      env: { SVC_DATA_DIR: target.dir, SVC_IDENTITY_KEY_ENCRYPTION_KEY: KEK },
    });
    closers.push(() => second.close());
    for (const [id, token] of tokens) {
      const api = await http(second.url, 'GET', `/api/share?token=${token}`);
      expect(api.status, api.text).toBe(200);
      expect(api.body.session_id).toBe(id);
    }
  });
});
