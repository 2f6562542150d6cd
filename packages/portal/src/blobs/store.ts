import type { Readable } from 'node:stream';

export interface PutResult {
  key: string;
  size: number;
  sha256: string;
}

export class BlobNotFoundError extends Error {
  constructor(key: string) {
    super(`blob not found: ${key}`);
    this.name = 'BlobNotFoundError';
  }
}

/**
 * Where session files live. Objects are immutable: a new version of a file is a new
 * object, committed by pointing a database row at it, after which the old object is
 * deleted. So an object is either fully written and referenced, or an orphan that
 * `sweep` removes. An S3-compatible backend implements the same four operations.
 */
export interface BlobStore {
  /** Stream `source` into a new object under `prefix`; resolves once it is durable. */
  put(prefix: string, source: Readable | AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<PutResult>;
  get(key: string): Promise<{ stream: Readable; size: number }>;
  delete(keys: string[]): Promise<void>;
  /**
   * Remove unfinished writes and objects no row references, when their writer is known
   * to be gone (a dead process on this host) or they are older than the grace period.
   */
  sweep(isReferenced: (key: string) => boolean): Promise<{ removed: number }>;
}
