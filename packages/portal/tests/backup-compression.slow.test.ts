import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '@svc/test-support/cli';
import { createLicense } from '@svc/test-support/factories';
import { createTestDatabase, KEY_ENCRYPTION_KEY, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import {
  blobObjects,
  blobPath,
  newSessionId,
  postUpload,
  sessionDoc,
  sessionParts,
  sha256,
} from '@svc/test-support/upload';
import { STATUS_FILE } from '../src/operations/backup/status.ts';

/**
 * `npm run backup` writes a zstd-compressed archive and records its time for
 * svc_backup_last_success_timestamp_seconds; restore reads it, and still reads the uncompressed
 * archives written before (the same tar without the compression), and a gzip-compressed one.
 */

const CLI = path.resolve(import.meta.dirname, '../src/operations/backup/cli.ts');
const ZSTD_MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);
/** A scanner's log: repetitive text, as real pipeline logs are. */
const LOG = Array.from(
  { length: 4000 },
  (_, i) => `[${i}] nmap -sV 10.1.0.${i % 254}: 22/tcp open ssh OpenSSH 9.2p1\n`,
).join('');

let source: TestPortal;
let dir: string;
const env = () => ({
  DATABASE_URL: source.databaseUrl,
  SVC_DATA_DIR: source.dataDir,
  SVC_IDENTITY_KEY_ENCRYPTION_KEY: KEY_ENCRYPTION_KEY,
});

beforeAll(async () => {
  source = await startTestPortal();
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-backup-zstd-'));
  const { key } = await createLicense(source, { tier: 'business' });
  for (let i = 0; i < 3; i++) {
    const res = await postUpload(
      source.url,
      key,
      sessionParts(sessionDoc('session-complete.json', newSessionId()), { log: LOG }),
    );
    expect(res.status, res.text).toBe(200);
  }
});
afterAll(async () => {
  await source?.close();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

async function sessionCount(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return Number((await client.query('SELECT count(*) FROM sessions')).rows[0].count);
  } finally {
    await client.end();
  }
}

/** The SHA-256 of every stored object (restore stores them under new keys), sorted. */
async function objectDigests(dataDir: string): Promise<string[]> {
  const keys = await blobObjects(dataDir);
  return (await Promise.all(keys.map(async (k) => sha256(await fs.readFile(blobPath(dataDir, k)))))).sort();
}

/** Restore `archive` into an empty database and data directory; answers what they hold. */
async function restoreInto(archive: string): Promise<{ sessions: number; objects: string[] }> {
  const target = {
    DATABASE_URL: await createTestDatabase(),
    SVC_DATA_DIR: await fs.mkdtemp(path.join(dir, 'target-')),
  };
  const res = await runCli(process.execPath, [CLI, 'restore', archive], {
    env: { ...target, SVC_IDENTITY_KEY_ENCRYPTION_KEY: KEY_ENCRYPTION_KEY },
  });
  expect(res.stderr).toBe('');
  expect(res.code).toBe(0);
  expect(res.stdout).toMatch(new RegExp(`^restored ${archive}: \\d+ rows, 6 objects`));
  return { sessions: await sessionCount(target.DATABASE_URL), objects: await objectDigests(target.SVC_DATA_DIR) };
}

describe('compressed backups', () => {
  let compressed: string;
  let plain: string;

  it('backup writes a zstd archive, says so, and records its completion beside the data directory', async () => {
    compressed = path.join(dir, 'portal.tar.zst');
    const before = Date.now();
    const made = await runCli(process.execPath, [CLI, 'backup', compressed], { env: env() });
    expect(made.stderr).toBe('');
    expect(made.code).toBe(0);
    const size = (await fs.stat(compressed)).size;
    expect(made.stdout).toMatch(
      new RegExp(
        `^backup written: ${compressed} \\(\\d+ tables, \\d+ rows, 6 objects, ${size} bytes, zstd-compressed\\)\\n$`,
      ),
    );
    const head = Buffer.alloc(4);
    const fh = await fs.open(compressed, 'r');
    await fh.read(head, 0, 4, 0);
    await fh.close();
    expect(head).toEqual(ZSTD_MAGIC);

    const status = JSON.parse(await fs.readFile(path.join(source.dataDir, STATUS_FILE), 'utf8'));
    expect(status.archive).toBe(compressed);
    expect(status.bytes).toBe(size);
    expect(Date.parse(status.completed_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(status.completed_at)).toBeLessThanOrEqual(Date.now());

    // The archive as backups before compression wrote it: the same tar, uncompressed.
    plain = path.join(dir, 'portal.tar');
    await pipeline(createReadStream(compressed), zlib.createZstdDecompress(), createWriteStream(plain));
    const plainSize = (await fs.stat(plain)).size;
    expect(size).toBeLessThan(plainSize / 4);
  });

  it('restore reads the compressed archive, the uncompressed one of older backups, and a gzip one', async () => {
    const expected = { sessions: await sessionCount(source.databaseUrl), objects: await objectDigests(source.dataDir) };
    expect(expected.sessions).toBe(3);
    expect(await restoreInto(compressed)).toEqual(expected);
    expect(await restoreInto(plain)).toEqual(expected);
    const gzipped = path.join(dir, 'portal.tar.gz');
    await pipeline(createReadStream(plain), zlib.createGzip(), createWriteStream(gzipped));
    expect(await restoreInto(gzipped)).toEqual(expected);
  });

  it('a compressed archive cut short is refused as damaged by restore --verify', async () => {
    const cut = path.join(dir, 'cut.tar.zst');
    const bytes = await fs.readFile(compressed);
    await fs.writeFile(cut, bytes.subarray(0, Math.floor(bytes.length / 2)));
    const res = await runCli(process.execPath, [CLI, 'restore', '--verify', cut], { env: env() });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(new RegExp(`^${cut} is damaged or not a portal backup: `));
  });
});
