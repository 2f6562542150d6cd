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
 * What a failed write of the store becomes: a store that cannot be reached stays a 503 (logged
 * as a warning); anything else is logged and becomes the storage failure (500) `failure` says.
 */
export function storageFailure(err: unknown, failure: string, logger: Log, fields: object = {}): Error {
  if (err instanceof BlobStoreUnavailableError) {
    logger.warn({ err: err.cause, ...fields }, 'blob store unavailable');
    return err;
  }
  logger.error({ err, ...fields }, 'blob write failed');
  return new DomainError('internal.storage', failure);
}

/** Stream a file into a new object; a failure of the store becomes `storageFailure`'s error. */
export function storeObject(
  ctx: AppContext,
  prefix: string,
  source: Readable | AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  opts: StoreOptions,
): Promise<PutResult> {
  return ctx.blobs.put(prefix, source).catch((err: unknown) => {
    if (opts.isCallerError?.(err)) throw err;
    throw storageFailure(err, opts.failure, opts.logger);
  });
}

/** Remove the objects of a write that did not commit; one that cannot be removed is an orphan for the sweep. */
export async function discardObjects(ctx: AppContext, keys: string[], logger: Log, message: string): Promise<void> {
  await ctx.blobs.delete(keys).catch((err: unknown) => logger.warn({ err }, message));
}
