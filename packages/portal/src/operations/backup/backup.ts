import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import type pg from 'pg';
import tar from 'tar-stream';
import { fsyncPath } from '@svc/protocol/node';
import { BlobNotFoundError, type BlobStore } from '../../blobs/store.ts';
import { KEY_FILE } from '../../identity/key-encryption.ts';
import { authenticateManifest } from './authentication.ts';
import {
  ArchiveError,
  Digest,
  type DumpedTable,
  FORMAT,
  FORMAT_VERSION,
  MAC_ENTRY,
  MANIFEST,
  type Manifest,
  type ManifestEntry,
  objectEntry,
  tableEntry,
} from './format.ts';
import { keyOpensSecrets } from './key-check.ts';
import {
  appliedMigrations,
  beginSnapshot,
  clearDeliveryBodyCount,
  clearShareTokenCount,
  copyOut,
  portalTables,
  type ReferencedObject,
  referencedObjects,
  sequenceValues,
} from './queries.ts';

export interface BackupOptions {
  pool: pg.Pool;
  /** Read through the contract only: the objects may live on disk or in an S3-compatible store. */
  blobs: Pick<BlobStore, 'get'>;
  archive: string;
  portalVersion: string;
  /** The portal's key-encryption key: the archive's authentication code is derived from it (authentication.ts). */
  keyEncryptionKey: Buffer;
  now?: () => Date;
  /** A new snapshot is taken when an object was replaced or deleted after the last one. */
  attempts?: number;
  onRetry?: (err: Error, attempt: number) => void;
}

export interface BackupResult {
  archive: string;
  tables: number;
  rows: number;
  objects: number;
  bytes: number;
}

/**
 * Write one consistent archive: the rows as one REPEATABLE READ snapshot saw them, and exactly
 * the objects those rows point at. Objects are immutable and replaced by committing a row that
 * points at a new one, so an object the snapshot references can only vanish when its session
 * was deleted or its file replaced after the snapshot: then the attempt is dropped and a new
 * snapshot taken. The archive is written beside its final name and linked into place at the end,
 * so a failed backup leaves nothing and an existing file is never overwritten.
 */
export async function createBackup(opts: BackupOptions): Promise<BackupResult> {
  const attempts = opts.attempts ?? 3;
  for (let attempt = 1; ; attempt++) {
    try {
      return await attemptBackup(opts);
    } catch (err) {
      if (!(err instanceof BlobNotFoundError) || attempt >= attempts) {
        if (err instanceof BlobNotFoundError)
          throw new ArchiveError(
            `${err.message}: sessions kept being deleted or their files replaced during ${attempts} snapshots; run the backup again`,
          );
        throw err;
      }
      opts.onRetry?.(err, attempt);
    }
  }
}

async function attemptBackup(opts: BackupOptions): Promise<BackupResult> {
  const archive = path.resolve(opts.archive);
  if (
    await fs.access(archive).then(
      () => true,
      () => false,
    )
  )
    throw new ArchiveError(`${archive} already exists; a backup never overwrites a file`);
  const stem = `${archive}.partial-${randomBytes(4).toString('hex')}`;
  const spool = `${stem}.d`;
  await fs.mkdir(spool, { mode: 0o700 });
  try {
    const dump = await dumpSnapshot(opts.pool, spool, opts.keyEncryptionKey);
    const manifest: Manifest = {
      format: FORMAT,
      format_version: FORMAT_VERSION,
      created_at: (opts.now?.() ?? new Date()).toISOString(),
      portal_version: opts.portalVersion,
      schema_migration: dump.migration,
      tables: dump.tables,
      sequences: dump.sequences,
      entries: [
        ...dump.entries,
        ...dump.objects.map((o) => ({ name: objectEntry(o.key), size: o.size, sha256: o.sha256 })),
      ],
    };
    await writeArchive(stem, spool, manifest, dump.objects, opts.blobs, opts.keyEncryptionKey);
    // link, not rename: fails rather than replace a file created meanwhile.
    await fs.link(stem, archive);
    // The new name on disk before the backup is reported written (the archive itself is fsynced).
    await fsyncPath(path.dirname(archive));
    return {
      archive,
      tables: dump.tables.length,
      rows: dump.tables.reduce((n, t) => n + t.rows, 0),
      objects: dump.objects.length,
      bytes: (await fs.stat(archive)).size,
    };
  } finally {
    await fs.rm(stem, { force: true });
    await fs.rm(spool, { recursive: true, force: true });
  }
}

interface Dump {
  migration: string;
  tables: DumpedTable[];
  sequences: Manifest['sequences'];
  entries: ManifestEntry[];
  objects: ReferencedObject[];
}

/** Every table into a spool file, and the list of referenced objects, from one snapshot. */
async function dumpSnapshot(pool: pg.Pool, spool: string, kek: Buffer): Promise<Dump> {
  const conn = await pool.connect();
  try {
    await beginSnapshot(conn);
    const migration = (await appliedMigrations(conn)).at(-1);
    if (migration === undefined) throw new ArchiveError('the database has no portal schema to back up');
    await refuseUnsafeSnapshot(conn, kek, migration);
    const tables: DumpedTable[] = [];
    const entries: ManifestEntry[] = [];
    for (const table of await portalTables(conn)) {
      const digest = new Digest();
      const out = copyOut(conn, table);
      await pipeline(
        out,
        (src: AsyncIterable<Buffer>) => digest.pass(src),
        createWriteStream(path.join(spool, `${table.name}.copy`)),
      );
      const entry = tableEntry(table.name);
      tables.push({ ...table, entry, rows: out.rowCount });
      entries.push({ name: entry, size: digest.size, sha256: digest.hex() });
    }
    const sequences = await sequenceValues(conn);
    const objects = await referencedObjects(conn);
    await conn.query('COMMIT');
    return { migration, tables, sequences, entries, objects };
  } catch (err) {
    await conn.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    conn.release();
  }
}

/** Add one entry from a stream, with backpressure (the pack is read by the file writer). */
async function addEntry(
  pack: tar.Pack,
  name: string,
  size: number,
  source: AsyncIterable<Buffer> | Iterable<Buffer>,
): Promise<void> {
  const { promise: written, resolve, reject } = Promise.withResolvers<void>();
  const settle = (err?: Error | null) => (err ? reject(err) : resolve());
  const sink = pack.entry({ name, size, mode: 0o600, mtime: new Date(0) }, (err) => settle(err));
  for await (const chunk of source) if (!sink.write(chunk)) await once(sink, 'drain');
  sink.end(null);
  await written;
}

/**
 * Never an archive holding a share token in clear (a database not yet started by a portal of
 * this version), nor one authenticated under a key that does not open the database's secrets
 * (it could never be restored).
 */
async function refuseUnsafeSnapshot(conn: pg.ClientBase, kek: Buffer, migration: string): Promise<void> {
  const clear = await clearShareTokenCount(conn);
  if (clear > 0)
    throw new ArchiveError(
      `the database holds ${clear} share tokens in clear (schema ${migration}): start the portal of this version once, which seals them, then back up`,
    );
  const bodies = await clearDeliveryBodyCount(conn);
  if (bodies > 0)
    throw new ArchiveError(
      `the database holds ${bodies} webhook delivery bodies with a share token in clear (schema ${migration}): start the portal of this version once, which seals them, then back up`,
    );
  const failed = await keyOpensSecrets(conn, kek);
  if (failed !== null)
    throw new ArchiveError(
      `SVC_IDENTITY_KEY_ENCRYPTION_KEY (or the data directory's ${KEY_FILE}) does not open the database's ${failed}: back up with the key the portal runs with`,
    );
}

/**
 * zstd at level 3 (format.ts says why), with its frame checksum: a flipped bit is found by the
 * decompressor even before the manifest's SHA-256 of the entry finds it.
 */
const compressor = () =>
  zlib.createZstdCompress({
    params: { [zlib.constants.ZSTD_c_compressionLevel]: 3, [zlib.constants.ZSTD_c_checksumFlag]: 1 },
  });

async function writeArchive(
  file: string,
  spool: string,
  manifest: Manifest,
  objects: ReferencedObject[],
  blobs: Pick<BlobStore, 'get'>,
  kek: Buffer,
): Promise<void> {
  const pack = tar.pack();
  const out = createWriteStream(file, { flags: 'wx', mode: 0o600 });
  const written = pipeline(pack as unknown as Readable, compressor(), out);
  try {
    const text = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
    await addEntry(pack, MANIFEST, text.length, [text]);
    const mac = authenticateManifest(kek, text);
    await addEntry(pack, MAC_ENTRY, mac.length, [mac]);
    for (const t of manifest.tables) {
      const size = manifest.entries.find((e) => e.name === t.entry)?.size ?? 0;
      await addEntry(pack, t.entry, size, createReadStream(path.join(spool, `${t.name}.copy`)));
    }
    for (const o of objects) {
      const { stream, size } = await blobs.get(o.key);
      if (size !== o.size) {
        stream.destroy();
        throw new ArchiveError(`object ${o.key} holds ${size} bytes, its session row recorded ${o.size}`);
      }
      const digest = new Digest();
      await addEntry(pack, objectEntry(o.key), size, digest.pass(stream));
      if (digest.hex() !== o.sha256)
        throw new ArchiveError(
          `object ${o.key} does not match the SHA-256 its session row recorded; the store holds a damaged copy`,
        );
    }
    pack.finalize();
    await written;
  } catch (err) {
    pack.destroy(err as Error);
    await written.catch(() => undefined);
    throw err;
  }
  await fsyncPath(file);
}
