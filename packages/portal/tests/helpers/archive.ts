import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import tar from 'tar-stream';

/**
 * A backup archive taken apart and put back together, as someone who can write archives (but
 * lacks the key-encryption key) would: the tests edit a member, recompute its checksums in the
 * manifest, and see what restore makes of it.
 */

export interface ArchiveEntry {
  name: string;
  data: Buffer;
}

const ZSTD_MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);

/** Every entry of the tar (zstd-compressed as backup writes it, or plain as older versions did), in order. */
export async function unpackArchive(file: string): Promise<ArchiveEntry[]> {
  const extract = tar.extract();
  const raw = await readFile(file);
  Readable.from([raw.subarray(0, 4).equals(ZSTD_MAGIC) ? zlib.zstdDecompressSync(raw) : raw]).pipe(extract);
  const out: ArchiveEntry[] = [];
  for await (const entry of extract as AsyncIterable<AsyncIterable<Buffer> & { header: tar.Header }>) {
    const chunks: Buffer[] = [];
    for await (const chunk of entry) chunks.push(chunk);
    out.push({ name: entry.header.name, data: Buffer.concat(chunks) });
  }
  return out;
}

/** Write `entries` as a zstd-compressed tar, in the given order, as backup does. */
export async function packArchive(entries: ArchiveEntry[], file: string): Promise<void> {
  const pack = tar.pack();
  const written = pipeline(
    pack as unknown as Readable,
    zlib.createZstdCompress(),
    createWriteStream(file, { flags: 'wx' }),
  );
  for (const e of entries)
    await new Promise<void>((resolve, reject) =>
      pack.entry({ name: e.name, size: e.data.length, mode: 0o600, mtime: new Date(0) }, e.data, (err) =>
        err ? reject(err) : resolve(),
      ),
    );
  pack.finalize();
  await written;
}

type Manifest = {
  format_version: number;
  schema_migration: string;
  tables: { name: string; entry: string; columns: string[] }[];
  entries: { name: string; size: number; sha256: string }[];
};

export const manifestOf = (entries: ArchiveEntry[]): Manifest =>
  JSON.parse(entryOf(entries, 'manifest.json').data.toString('utf8')) as Manifest;

export function entryOf(entries: ArchiveEntry[], name: string): ArchiveEntry {
  const found = entries.find((e) => e.name === name);
  if (found === undefined) throw new Error(`no entry ${name} in the archive`);
  return found;
}

/**
 * Replace one entry's bytes and recompute its size and SHA-256 in the manifest, written the way
 * the backup writes it: the archive's checksums all match again.
 */
export function editEntry(entries: ArchiveEntry[], name: string, edit: (data: Buffer) => Buffer): ArchiveEntry[] {
  const manifest = manifestOf(entries);
  const data = edit(entryOf(entries, name).data);
  const listed = manifest.entries.find((e) => e.name === name);
  if (listed === undefined) throw new Error(`${name} is not in the manifest`);
  listed.size = data.length;
  listed.sha256 = createHash('sha256').update(data).digest('hex');
  const text = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
  return entries.map((e) =>
    e.name === name ? { name, data } : e.name === 'manifest.json' ? { name: e.name, data: text } : e,
  );
}

/** A table's rows as the archive holds them (COPY text format; no value of these tables is escaped). */
export function tableRows(entries: ArchiveEntry[], table: string): Record<string, string>[] {
  const shape = manifestOf(entries).tables.find((t) => t.name === table);
  if (shape === undefined) throw new Error(`no table ${table} in the archive`);
  const text = entryOf(entries, shape.entry).data.toString('utf8');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => Object.fromEntries(line.split('\t').map((v, i) => [shape.columns[i] as string, v])));
}
