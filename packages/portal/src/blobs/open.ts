import path from 'node:path';
import type { Config } from '../config/index.ts';
import { FsBlobStore } from './fs-store.ts';
import type { BlobStore } from './store.ts';

/** The configured store, checked before the portal listens (an S3 bucket must answer HeadBucket). */
export async function openBlobStore(config: Config): Promise<{ store: BlobStore; close(): void }> {
  if (config.blobStore.kind === 's3') {
    // Loaded only here: the AWS SDK takes a quarter of a second to import, which a portal on
    // the file store (and every process that imports the server) need not pay.
    const { S3BlobStore } = await import('./s3-store.ts');
    const store = new S3BlobStore(config.blobStore);
    try {
      await store.init();
    } catch (err) {
      store.close();
      throw err;
    }
    return { store, close: () => store.close() };
  }
  const store = new FsBlobStore(path.join(config.dataDir, 'blobs'));
  await store.init();
  return { store, close: () => {} };
}
