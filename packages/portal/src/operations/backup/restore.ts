import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import type { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import type { Kysely } from 'kysely';
import type pg from 'pg';
import tar from 'tar-stream';
import type { BlobStore } from '../../blobs/store.ts';
import { knowsMigration, migrateTo } from '../../db/migrate.ts';
import type { Database } from '../../db/schema.ts';
import { KEY_FILE } from '../../identity/key-encryption.ts';
import { checkManifest, checkUnauthenticated, MAX_MAC_BYTES } from './authentication.ts';
import {
  ArchiveError,
  Digest,
  MAC_ENTRY,
  MANIFEST,
  MAX_MANIFEST_BYTES,
  type Manifest,
  type ManifestEntry,
  OBJECT_PREFIX,
  parseManifest,
  UNAUTHENTICATED_VERSION,
} from './format.ts';
import { keyOpensSecrets } from './key-check.ts';
import {
  appliedMigrations,
  copyIn,
  remapObjectKeys,
  setSequences,
  setUserTriggers,
  tablesWithRows,
} from './queries.ts';

/** The target already holds a portal: restore never merges into or overwrites one. */
export class RestoreRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RestoreRefused';
  }
}

type TarEntry = AsyncIterable<Buffer> & { header: tar.Header; resume(): void };

/** The archive's entries in order; a truncated or foreign file is an ArchiveError. */
async function* entriesOf(file: string): AsyncGenerator<TarEntry> {
  const extract = tar.extract();
  const source = createReadStream(file);
  const inflate = decompressorFor(await firstBytes(file));
  source.on('error', (err) => extract.destroy(err));
  if (inflate === null) source.pipe(extract);
  else {
    inflate.on('error', (err) => extract.destroy(err));
    source.pipe(inflate).pipe(extract);
  }
  try {
    for await (const entry of extract as AsyncIterable<TarEntry>) {
      if (entry.header.type !== 'file') throw new ArchiveError(`entry ${entry.header.name} is not a file`);
      yield entry;
    }
  } catch (err) {
    if (err instanceof ArchiveError || (err as NodeJS.ErrnoException).code === 'ENOENT') throw err;
    throw new ArchiveError(`${file} is damaged or not a portal backup: ${(err as Error).message}`);
  } finally {
    source.destroy();
    inflate?.destroy();
  }
}

const ZSTD_MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);
const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

/** zstd (what backup writes), gzip (an archive recompressed by hand), else the plain tar of older backups. */
function decompressorFor(head: Buffer): Transform | null {
  if (head.subarray(0, 4).equals(ZSTD_MAGIC)) return zlib.createZstdDecompress();
  if (head.subarray(0, 2).equals(GZIP_MAGIC)) return zlib.createGunzip();
  return null;
}

async function firstBytes(file: string): Promise<Buffer> {
  const fh = await fs.open(file, 'r');
  try {
    const { buffer, bytesRead } = await fh.read(Buffer.alloc(4), 0, 4, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

async function readAll(entry: TarEntry, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of entry) {
    size += chunk.length;
    if (size > max) throw new ArchiveError(`${entry.header.name} is larger than ${max} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** How a restore checks that the archive is the one a portal wrote. */
export interface Authentication {
  /** The key-encryption key the archive's authentication code is derived from (authentication.ts). */
  keyEncryptionKey: Buffer;
  /** Accept an archive of format version 1, written before archives were authenticated. */
  allowUnauthenticated?: boolean;
}

/**
 * The manifest, authenticated: a current archive's `manifest.hmac` must be the key's code for
 * the manifest's bytes, checked before any other entry is read.
 */
async function readManifest(iterator: AsyncGenerator<TarEntry>, auth: Authentication): Promise<Manifest> {
  const first = await iterator.next();
  if (first.done || first.value.header.name !== MANIFEST)
    throw new ArchiveError(`the archive does not start with ${MANIFEST}`);
  const bytes = await readAll(first.value, MAX_MANIFEST_BYTES);
  const manifest = parseManifest(bytes.toString('utf8'));
  if (manifest.format_version === UNAUTHENTICATED_VERSION) {
    checkUnauthenticated(manifest, auth.allowUnauthenticated === true);
    return manifest;
  }
  const second = await iterator.next();
  if (second.done || second.value.header.name !== MAC_ENTRY)
    throw new ArchiveError(
      `${MAC_ENTRY} is missing after ${MANIFEST}: the archive cannot be authenticated; restore refused`,
    );
  checkManifest(auth.keyEncryptionKey, bytes, await readAll(second.value, MAX_MAC_BYTES));
  return manifest;
}

/**
 * Walk the archive: `take` consumes each entry's bytes through the digest; afterwards its size
 * and SHA-256 must be the manifest's, every listed entry must be there once and nothing else.
 */
async function walk(
  file: string,
  auth: Authentication,
  take: (entry: ManifestEntry, bytes: AsyncIterable<Buffer>) => Promise<void>,
): Promise<Manifest> {
  const iterator = entriesOf(file);
  const manifest = await readManifest(iterator, auth);
  const expected = new Map(manifest.entries.map((e) => [e.name, e]));
  const seen = new Set<string>();
  for await (const entry of iterator) {
    const name = entry.header.name;
    const listed = expected.get(name);
    if (listed === undefined) throw new ArchiveError(`entry ${name} is not listed in ${MANIFEST}`);
    if (seen.has(name)) throw new ArchiveError(`entry ${name} appears twice`);
    seen.add(name);
    const digest = new Digest();
    try {
      await take(listed, digest.pass(entry));
    } catch (err) {
      if (err instanceof ArchiveError) throw err;
      throw new ArchiveError(`entry ${name} could not be restored: ${(err as Error).message}`);
    }
    const sha256 = digest.hex();
    if (digest.size !== listed.size || sha256 !== listed.sha256)
      throw new ArchiveError(
        `entry ${name} is damaged: ${digest.size} bytes with SHA-256 ${sha256}, the manifest records ${listed.size} bytes with ${listed.sha256}`,
      );
  }
  const missing = manifest.entries.find((e) => !seen.has(e.name));
  if (missing) throw new ArchiveError(`entry ${missing.name} is missing from the archive`);
  return manifest;
}

/** Check the archive's authentication and every entry against the manifest without touching anything. */
export async function verifyArchive(file: string, auth: Authentication): Promise<Manifest> {
  return walk(file, auth, async (_entry, bytes) => {
    for await (const _ of bytes);
  });
}

export interface RestoreOptions extends Authentication {
  pool: pg.Pool;
  db: Kysely<Database>;
  /** Written through the contract only; a restore's objects are named by the store anew. */
  blobs: Pick<BlobStore, 'put' | 'delete'>;
  archive: string;
}

export interface RestoreResult {
  manifest: Manifest;
  rows: number;
  objects: number;
}

/**
 * Load an archive into an empty database and blob store. The whole archive is verified first,
 * then loaded in one transaction that is checked again as it streams and committed only when
 * every entry matched: a damaged archive or a failure leaves no row, and the objects already
 * written are deleted (no row points at them, so they would be swept as orphans anyway).
 */
export async function restoreBackup(opts: RestoreOptions): Promise<RestoreResult> {
  const conn = await opts.pool.connect();
  const written: string[] = [];
  try {
    await refuseNonEmpty(conn);
    // The key the restored portal will run with: it authenticates the archive and must open its secrets.
    const manifest = await verifyArchive(opts.archive, opts);
    const target = manifest.schema_migration;
    if (!knowsMigration(target))
      throw new ArchiveError(
        `the archive was taken at schema ${target}, which this portal does not know; restore it with a newer portal`,
      );
    const newer = (await appliedMigrations(conn)).filter((m) => m > target);
    if (newer.length > 0)
      throw new RestoreRefused(
        `the target database is at a newer schema (${newer.at(-1)}) than the archive (${target})`,
      );
    await migrateTo(opts.db, target);

    await conn.query('BEGIN');
    const tables = new Map(manifest.tables.map((t) => [t.entry, t]));
    await setUserTriggers(conn, manifest.tables, false);
    // Checked again under the locks ALTER TABLE took: nobody wrote in between.
    await refuseNonEmpty(conn);
    const keys = new Map<string, string>();
    // Authenticated again: the file is read a second time, and may have been replaced meanwhile.
    await walk(opts.archive, opts, async (entry, bytes) => {
      const table = tables.get(entry.name);
      if (table !== undefined) {
        await pipeline(bytes, copyIn(conn, table));
      } else if (entry.name.startsWith(OBJECT_PREFIX)) {
        const key = entry.name.slice(OBJECT_PREFIX.length);
        const slash = key.lastIndexOf('/');
        const put = await opts.blobs.put(slash > 0 ? key.slice(0, slash) : 'restored', bytes);
        written.push(put.key);
        keys.set(key, put.key);
      } else {
        throw new ArchiveError(`entry ${entry.name} is neither a table nor an object`);
      }
    });
    await setSequences(conn, manifest.sequences);
    await remapObjectKeys(conn, keys);
    await refuseForeignKey(conn, opts.keyEncryptionKey);
    await setUserTriggers(conn, manifest.tables, true);
    await conn.query('COMMIT');
    return { manifest, rows: manifest.tables.reduce((n, t) => n + t.rows, 0), objects: keys.size };
  } catch (err) {
    await conn.query('ROLLBACK').catch(() => undefined);
    if (written.length > 0) await opts.blobs.delete(written).catch(() => undefined);
    throw err;
  } finally {
    conn.release();
  }
}

async function refuseNonEmpty(conn: pg.ClientBase): Promise<void> {
  const full = await tablesWithRows(conn);
  if (full.length > 0)
    throw new RestoreRefused(
      `the target database already holds a portal (rows in ${full.join(', ')}); restore only into an empty database and data directory`,
    );
}

/**
 * The archive holds the signing key, webhook secrets and share tokens sealed, never the key that
 * opens them (a backup alone must not mint tokens or open reports): a restore under another key
 * would give a portal that cannot start, so it is refused before anything commits. (An
 * authenticated archive was already refused under another key; this catches version 1.)
 */
async function refuseForeignKey(conn: pg.ClientBase, kek: Buffer): Promise<void> {
  const failed = await keyOpensSecrets(conn, kek);
  if (failed !== null)
    throw new RestoreRefused(
      `SVC_IDENTITY_KEY_ENCRYPTION_KEY (or the data directory's ${KEY_FILE}) does not open the archive's ${failed}: restore with the key of the portal the backup was taken from`,
    );
}
