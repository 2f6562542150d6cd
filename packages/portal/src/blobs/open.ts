import path from 'node:path';
import type { Config } from '../config/index.ts';
import { FsBlobStore } from './fs-store.ts';
import { type BlobStore, BlobStoreUnavailableError } from './store.ts';

/**
 * The configured store, checked before the portal listens: an S3 bucket must answer HeadBucket.
 * A bucket that is missing or refuses the credentials always fails the start; one that cannot be
 * reached (down, silent, its own 5xx) fails it too unless `unreachable` is given, which is told
 * instead (the check then took at most the store's timeouts).
 */
export async function openBlobStore(
  config: Config,
  opts: { unreachable?: (err: BlobStoreUnavailableError) => void } = {},
): Promise<{ store: BlobStore; close(): void }> {
  if (config.blobStore.kind === 's3') {
    // Loaded only here: the AWS SDK takes a quarter of a second to import, which a portal on
    // the file store (and every process that imports the server) need not pay.
    const { S3BlobStore } = await import('./s3-store.ts');
    const store = new S3BlobStore(config.blobStore);
    try {
      await store.init();
    } catch (err) {
      if (err instanceof BlobStoreUnavailableError && opts.unreachable !== undefined) {
        opts.unreachable(err);
        return { store, close: () => store.close() };
      }
      store.close();
      // Its cause says which bucket, where and why; the unavailable error's message is for HTTP answers.
      throw err instanceof BlobStoreUnavailableError ? err.cause : err;
    }
    return { store, close: () => store.close() };
  }
  const store = new FsBlobStore(path.join(config.dataDir, 'blobs'));
  await store.init();
  return { store, close: () => {} };
}
