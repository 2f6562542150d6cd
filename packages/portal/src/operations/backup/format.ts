import { createHash, type Hash } from 'node:crypto';
import type { SequenceValue, TableShape } from './queries.ts';

/**
 * A backup archive is a zstd-compressed tar (`.tar.zst`; archives written by earlier portals are
 * the same tar uncompressed, and restore reads both, telling them apart by their first bytes).
 * zstd rather than gzip: at its default level it compresses session JSON, HTML reports and logs
 * as small as gzip -9 at about three times gzip -6's speed
 * (docs/decisions.md#backup-archives-zstd-authenticated-without-the-key), and decompresses faster, so a
 * backup under load takes less CPU from the portal beside it; `tar --zstd` and `zstd -d` read it.
 * The tar holds `manifest.json` first, then `manifest.hmac` (its
 * authentication code, authentication.ts), then one `database/<table>.copy` per table (COPY
 * text format, columns as the manifest lists them), then `objects/<key>` for every object a
 * session row of the dump points at. The manifest holds the size and SHA-256 of every entry
 * after `manifest.hmac`. Format version 1 had no `manifest.hmac`.
 */
export const FORMAT = 'svc-portal-backup';
export const FORMAT_VERSION = 2;
/** Version 1: the same archive without `manifest.hmac` (restored only when the operator allows it). */
export const UNAUTHENTICATED_VERSION = 1;
export const MANIFEST = 'manifest.json';
export const MAC_ENTRY = 'manifest.hmac';
/** About 200 bytes per session file: room for well over a million; anything larger is not one of ours. */
export const MAX_MANIFEST_BYTES = 256 * 1024 * 1024;

export interface ManifestEntry {
  name: string;
  size: number;
  sha256: string;
}

export interface DumpedTable extends TableShape {
  entry: string;
  rows: number;
}

export interface Manifest {
  format: typeof FORMAT;
  format_version: number;
  created_at: string;
  portal_version: string;
  /** The last migration applied to the dumped database. */
  schema_migration: string;
  tables: DumpedTable[];
  sequences: SequenceValue[];
  entries: ManifestEntry[];
}

export const tableEntry = (table: string) => `database/${table}.copy`;
export const OBJECT_PREFIX = 'objects/';
export const objectEntry = (key: string) => `${OBJECT_PREFIX}${key}`;

export class ArchiveError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ArchiveError';
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Parse and check the manifest's shape; a damaged or foreign one is a clear ArchiveError. */
export function parseManifest(text: string): Manifest {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new ArchiveError(`the archive's ${MANIFEST} is damaged: ${(err as Error).message}`);
  }
  if (!isObject(doc) || doc['format'] !== FORMAT) throw new ArchiveError(`${MANIFEST} is not a portal backup manifest`);
  if (doc['format_version'] !== FORMAT_VERSION && doc['format_version'] !== UNAUTHENTICATED_VERSION)
    throw new ArchiveError(
      `the archive's format version ${String(doc['format_version'])} is not supported (this portal reads versions ${UNAUTHENTICATED_VERSION} and ${FORMAT_VERSION})`,
    );
  const entries = doc['entries'];
  const valid =
    typeof doc['schema_migration'] === 'string' &&
    Array.isArray(doc['tables']) &&
    Array.isArray(doc['sequences']) &&
    Array.isArray(entries) &&
    entries.every(
      (e) =>
        isObject(e) &&
        typeof e['name'] === 'string' &&
        Number.isSafeInteger(e['size']) &&
        typeof e['sha256'] === 'string' &&
        /^[0-9a-f]{64}$/.test(e['sha256']),
    );
  if (!valid) throw new ArchiveError(`the archive's ${MANIFEST} is damaged: fields are missing or malformed`);
  return doc as unknown as Manifest;
}

/** Counts and hashes the bytes that pass through `pass`. */
export class Digest {
  readonly #hash: Hash = createHash('sha256');
  size = 0;

  async *pass(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const chunk of source) {
      this.#hash.update(chunk);
      this.size += chunk.length;
      yield chunk;
    }
  }

  hex(): string {
    return this.#hash.digest('hex');
  }
}
