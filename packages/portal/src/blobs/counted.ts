import { BlobNotFoundError, type BlobStore } from './store.ts';

type Operation = 'put' | 'get' | 'delete';

/**
 * The store with its failures counted (svc_blob_store_failures_total): an S3 outage touches only
 * uploads and downloads, a few percent of requests, which the 5xx-rate alert never sees. A
 * missing object is an answer, not a failure; a put whose source failed (a refused or aborted
 * body) is the caller's, not the store's.
 */
export function countFailures(store: BlobStore, failed: (operation: Operation) => void): BlobStore {
  const counted = <T>(operation: Operation, call: Promise<T>, callerFailed = () => false): Promise<T> =>
    call.catch((err: unknown) => {
      if (!(err instanceof BlobNotFoundError) && !callerFailed()) failed(operation);
      throw err;
    });
  return {
    put(prefix, source) {
      let sourceFailed = false;
      const watched = async function* () {
        // An error thrown in at the yield comes from the store's side, not from the source.
        let yielding = false;
        try {
          for await (const chunk of source as AsyncIterable<Uint8Array>) {
            yielding = true;
            yield chunk;
            yielding = false;
          }
        } catch (err) {
          if (!yielding) sourceFailed = true;
          throw err;
        }
      };
      return counted('put', store.put(prefix, watched()), () => sourceFailed);
    },
    get: (key) => counted('get', store.get(key)),
    delete: (keys) => counted('delete', store.delete(keys)),
    sweep: (referenced, opts) => store.sweep(referenced, opts),
  };
}
