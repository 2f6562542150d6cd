import type { Readable } from 'node:stream';
import { BlobStoreUnavailableError, type PutResult } from '../blobs/store.ts';
import type { AppContext } from '../context.ts';
import { DomainError } from '../domain/errors.ts';

/** What the sessions area logs through: the request's logger, so a line carries its request. */
export interface Log {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface StoreOptions {
  /** The documented message of the 500 when the store fails. */
  failure: string;
  /** The request's logger, so the failure is logged with its request. */
  logger: Log;
  /** Errors the caller's source raises on purpose (a refused body): they pass through as they are. */
  isCallerError?: (err: unknown) => boolean;
}

/**
 * Stream a file into a new object; a failure of the store is logged and becomes a storage
 * failure (500), a store that cannot be reached a 503.
 */
export function storeObject(
  ctx: AppContext,
  prefix: string,
  source: Readable | AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  opts: StoreOptions,
): Promise<PutResult> {
  return ctx.blobs.put(prefix, source).catch((err: unknown) => {
    if (opts.isCallerError?.(err)) throw err;
    if (err instanceof BlobStoreUnavailableError) {
      opts.logger.warn({ err: err.cause }, 'blob store unavailable');
      throw err;
    }
    opts.logger.error({ err }, 'blob write failed');
    throw new DomainError('internal.storage', opts.failure);
  });
}

/** Remove the objects of a write that did not commit; one that cannot be removed is an orphan for the sweep. */
export async function discardObjects(ctx: AppContext, keys: string[], logger: Log, message: string): Promise<void> {
  await ctx.blobs.delete(keys).catch((err: unknown) => logger.warn({ err }, message));
}
