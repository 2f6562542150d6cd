import type { Readable } from 'node:stream';
import { DomainError } from '../domain/errors.ts';

const KEY_PATTERN = /^[A-Za-z0-9_-]+(?:\/[A-Za-z0-9_.-]+)*$/;

/** Keys are relative paths of safe segments: never absolute, never `.` or `..`. */
export function assertKey(key: string): void {
  if (!KEY_PATTERN.test(key) || key.split('/').some((s) => s === '.' || s === '..'))
    throw new Error(`unsafe blob key: ${key}`);
}

/** Leftovers of writers a sweep cannot prove dead (another host, a remote store) are removed after this long. */
export const ORPHAN_GRACE_MS = 60 * 60 * 1000;

/** A sweep lists and decides at most this many objects at a time (S3's own page), whatever the store holds. */
export const SWEEP_PAGE = 1000;

/** Which of `keys` a session references: asked once per page of candidates, which are never more than SWEEP_PAGE. */
export type ReferencedKeys = (keys: string[]) => Promise<ReadonlySet<string>>;

export interface SweepOptions {
  /** Stop between pages (and cancel a listing in flight): the sweep then rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
}

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
 * The store cannot be reached (network, timeouts, its own 5xx): a 503 the caller may retry,
 * never the caller's fault nor a lost file. The cause is logged, never shown.
 */
export class BlobStoreUnavailableError extends DomainError {
  constructor(cause: unknown) {
    super('unavailable.blob_store', 'Session storage is unavailable, try again shortly', { retryAfterSeconds: 5 });
    this.name = 'BlobStoreUnavailableError';
    this.cause = cause;
  }
}

/**
 * Where session files live. Objects are immutable: a new version of a file is a new
 * object, committed by pointing a database row at it, after which the old object is
 * deleted. So an object is either fully written and referenced, or an orphan that
 * `sweep` removes. Two implementations: files under the data directory (fs-store.ts) and
 * an S3-compatible bucket (s3-store.ts).
 */
export interface BlobStore {
  /** Stream `source` into a new object under `prefix`; resolves once it is durable. */
  put(prefix: string, source: Readable | AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<PutResult>;
  get(key: string): Promise<{ stream: Readable; size: number }>;
  delete(keys: string[]): Promise<void>;
  /**
   * Remove unfinished writes and objects no row references, when their writer is known
   * to be gone (a dead process on this host) or they are older than ORPHAN_GRACE_MS. A
   * remote store cannot see processes: there only the age counts. Page by page: memory and
   * the time between two checks of `signal` do not grow with the store. The age cutoff is
   * fixed when the sweep begins, before `referenced` is first asked.
   */
  sweep(referenced: ReferencedKeys, opts?: SweepOptions): Promise<{ removed: number }>;
}
