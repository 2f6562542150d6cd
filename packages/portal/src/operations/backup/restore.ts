import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { Kysely } from 'kysely';
import type pg from 'pg';
import tar from 'tar-stream';
import type { BlobStore } from '../../blobs/store.ts';
import { knowsMigration, migrateTo } from '../../db/migrate.ts';
import type { Database } from '../../db/schema.ts';
import { KEY_FILE, openSecret } from '../../identity/key-encryption.ts';
import {
  ArchiveError,
  Digest,
  MANIFEST,
  MAX_MANIFEST_BYTES,
  type Manifest,
  type ManifestEntry,
  OBJECT_PREFIX,
  parseManifest,
} from './format.ts';
import {
  appliedMigrations,
  copyIn,
  remapObjectKeys,
  sealedSecrets,
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
  source.on('error', (err) => extract.destroy(err));
  source.pipe(extract);
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
  }
}

async function readManifest(entry: TarEntry | undefined): Promise<Manifest> {
  if (entry?.header.name !== MANIFEST) throw new ArchiveError(`the archive does not start with ${MANIFEST}`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of entry) {
    size += chunk.length;
    if (size > MAX_MANIFEST_BYTES) throw new ArchiveError(`${MANIFEST} is larger than ${MAX_MANIFEST_BYTES} bytes`);
    chunks.push(chunk);
  }
  return parseManifest(Buffer.concat(chunks).toString('utf8'));
}

/**
 * Walk the archive: `take` consumes each entry's bytes through the digest; afterwards its size
 * and SHA-256 must be the manifest's, every listed entry must be there once and nothing else.
 */
async function walk(
  file: string,
  take: (entry: ManifestEntry, bytes: AsyncIterable<Buffer>) => Promise<void>,
): Promise<Manifest> {
  const iterator = entriesOf(file);
  const first = await iterator.next();
  const manifest = await readManifest(first.done ? undefined : first.value);
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

/** Check every entry against the manifest without touching anything. */
export async function verifyArchive(file: string): Promise<Manifest> {
  return walk(file, async (_entry, bytes) => {
    for await (const _ of bytes);
  });
}

export interface RestoreOptions {
  pool: pg.Pool;
  db: Kysely<Database>;
  /** Written through the contract only; a restore's objects are named by the store anew. */
  blobs: Pick<BlobStore, 'put' | 'delete'>;
  archive: string;
  /** The key-encryption key the restored portal will run with: it must open the archive's secrets. */
  keyEncryptionKey: Buffer;
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
    const manifest = await verifyArchive(opts.archive);
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
    await walk(opts.archive, async (entry, bytes) => {
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
 * The archive holds the signing key and webhook secrets sealed, never the key that opens them
 * (a backup alone must not mint tokens): a restore under another key would give a portal that
 * cannot start, so it is refused before anything commits.
 */
async function refuseForeignKey(conn: pg.ClientBase, kek: Buffer): Promise<void> {
  for (const s of await sealedSecrets(conn))
    if (openSecret(kek, s.id, s.sealed) === null)
      throw new RestoreRefused(
        `SVC_IDENTITY_KEY_ENCRYPTION_KEY (or the data directory's ${KEY_FILE}) does not open the archive's ${s.what} ${s.id}: restore with the key of the portal the backup was taken from`,
      );
}
