import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { S3Settings } from '../config/blob-store.ts';
import { ConfigError } from '../config/parse.ts';
import { OWNER_TAG } from './owner.ts';
import {
  assertKey,
  BlobNotFoundError,
  type BlobStore,
  BlobStoreUnavailableError,
  ORPHAN_GRACE_MS,
  type PutResult,
  type ReferencedKeys,
  SWEEP_PAGE,
  type SweepOptions,
} from './store.ts';

/**
 * S3's smallest part: a put holds at most about two parts of its file in memory (the one
 * being sent, the next being read). One part at a time, so a failure is the store's own
 * answer, not a sibling's cancelled read.
 */
const PART_SIZE = 5 * 1024 * 1024;
const QUEUE_SIZE = 1;
/** DeleteObjects takes at most this many keys. */
const DELETE_BATCH = 1000;
/** Tries of each request: docs/s3-storage.md states the time a silent store takes with it. */
const ATTEMPTS = 2;
const NOTHING: ReadonlySet<string> = new Set();
/** What a put names an object: `<owner tag>-<16 hex digits>`; a sweep touches nothing else. */
const OBJECT_NAME = /-[0-9a-f]{16}$/;

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

interface SdkError {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

/** The SDK's send options: a signal when there is one (the SDK takes no explicit undefined). */
const abortable = (signal: AbortSignal | undefined) => (signal === undefined ? {} : { abortSignal: signal });

const statusOf = (err: unknown) => (err as SdkError).$metadata?.httpStatusCode;

/** No answer from the store, or its own failure: worth a retry later, not a lost file. */
function storeIsDown(err: unknown): boolean {
  const e = err as SdkError;
  const status = statusOf(err);
  if (status !== undefined && status >= 500) return true;
  return NETWORK_CODES.has(e.code ?? '') || e.name === 'TimeoutError' || /socket hang up/i.test(e.message ?? '');
}

/** Where the bucket is, for messages: the endpoint without credentials, or AWS and the region. */
function locationOf(settings: S3Settings): string {
  if (settings.endpoint === null) return `AWS S3 (${settings.region})`;
  const u = new URL(settings.endpoint);
  return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
}

/**
 * Session files in an S3-compatible bucket, under the configured prefix. A put streams
 * through lib-storage's Upload: under one part a single PutObject, otherwise a multipart
 * upload, which makes the object visible only when it completes; on failure the upload is
 * aborted so no parts remain (a store that is down cannot take the abort either: the sweep
 * aborts such uploads after the grace period). Unlike the file store, nothing tells a sweep
 * whether another process's write is still in flight, so only the age rule applies there.
 */
export class S3BlobStore implements BlobStore {
  readonly #client: S3Client;
  readonly #bucket: string;
  /** The key prefix with its trailing slash, or ''. */
  readonly #prefix: string;
  readonly #where: string;
  readonly #now: () => number;

  /** `now`: the sweep's clock (tests age objects by moving it). */
  constructor(settings: S3Settings, opts: { now?: () => number } = {}) {
    this.#bucket = settings.bucket;
    this.#prefix = settings.prefix === '' ? '' : `${settings.prefix}/`;
    this.#where = locationOf(settings);
    this.#now = opts.now ?? Date.now;
    this.#client = new S3Client({
      region: settings.region,
      forcePathStyle: settings.forcePathStyle,
      ...(settings.endpoint === null ? {} : { endpoint: settings.endpoint }),
      ...(settings.credentials === null ? {} : { credentials: settings.credentials }),
      // Checksums only where S3 requires them: most S3-compatible stores do not take the
      // trailing checksums the SDK sends by default. Integrity is our sha256 on the row.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // One retry (a keep-alive socket the store closed just then, a 5xx); the SDK's default of
      // three would hold a request on a silent store past the portal's 30 s idle cut.
      maxAttempts: ATTEMPTS,
      // A store that does not answer fails fast (503) and its socket is destroyed, instead of
      // holding the request until the client gives up. The request timeout is on silence (no
      // byte either way), not on the whole exchange: a large part over a slow link is not cut
      // while it moves. Downloads keep their socket while they stream, hence the larger pool.
      requestHandler: {
        connectionTimeout: settings.connectTimeoutMs,
        socketTimeout: settings.requestTimeoutMs,
        httpAgent: { keepAlive: true, maxSockets: 256 },
      },
    });
  }

  /** Check the bucket is there and ours to use; the message names bucket and endpoint, never a secret. */
  async init(): Promise<void> {
    try {
      await this.#client.send(new HeadBucketCommand({ Bucket: this.#bucket }));
    } catch (err) {
      const status = statusOf(err);
      const what = `S3 bucket "${this.#bucket}" at ${this.#where}`;
      if (status === 404) throw new ConfigError('SVC_BLOB_URL', `names ${what}, which does not exist`);
      if (status === 301) throw new ConfigError('AWS_REGION', `is not the region of ${what}`);
      if (status === 401 || status === 403)
        throw new ConfigError('AWS_ACCESS_KEY_ID', `is refused by ${what} (HTTP ${status}): check the credentials`);
      const described = new Error(`${what} is not reachable: ${describe(err)}`, { cause: err });
      // Down or silent, not refusing: the caller may start without it (requests answer 503 meanwhile).
      throw storeIsDown(err) ? new BlobStoreUnavailableError(described) : described;
    }
  }

  close(): void {
    this.#client.destroy();
  }

  async put(prefix: string, source: Readable | AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<PutResult> {
    const key = `${prefix}/${OWNER_TAG}-${randomBytes(8).toString('hex')}`;
    assertKey(key);
    const hash = createHash('sha256');
    let size = 0;
    // The caller's source failing (a client gone, a body refused) is the caller's error, not the store's.
    let sourceError: { err: unknown } | null = null;
    const hashed = async function* () {
      // An error thrown in at the yield is the upload giving up on the stream (the store failed).
      let yielding = false;
      try {
        for await (const chunk of source as AsyncIterable<Uint8Array>) {
          hash.update(chunk);
          size += chunk.length;
          yielding = true;
          yield chunk;
          yielding = false;
        }
      } catch (err) {
        if (!yielding) sourceError = { err };
        throw err;
      }
    };
    const upload = new Upload({
      client: this.#client,
      params: { Bucket: this.#bucket, Key: this.#objectKey(key), Body: Readable.from(hashed()) },
      partSize: PART_SIZE,
      queueSize: QUEUE_SIZE,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (err) {
      if (sourceError !== null) throw (sourceError as { err: unknown }).err;
      throw this.#failure(err);
    }
    return { key, size, sha256: hash.digest('hex') };
  }

  async get(key: string): Promise<{ stream: Readable; size: number }> {
    assertKey(key);
    try {
      const out = await this.#client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: this.#objectKey(key) }));
      return { stream: out.Body as Readable, size: out.ContentLength ?? 0 };
    } catch (err) {
      if ((err as SdkError).name === 'NoSuchKey' || statusOf(err) === 404) throw new BlobNotFoundError(key);
      throw this.#failure(err);
    }
  }

  async delete(keys: string[]): Promise<void> {
    for (const key of keys) assertKey(key);
    for (let i = 0; i < keys.length; i += DELETE_BATCH) {
      const batch = keys.slice(i, i + DELETE_BATCH).map((k) => ({ Key: this.#objectKey(k) }));
      try {
        const out = await this.#client.send(
          new DeleteObjectsCommand({ Bucket: this.#bucket, Delete: { Objects: batch, Quiet: true } }),
        );
        const failed = (out.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
        if (failed.length > 0)
          throw new Error(`could not delete ${failed.length} object(s), first ${failed[0]?.Key}: ${failed[0]?.Code}`);
      } catch (err) {
        throw this.#failure(err);
      }
    }
  }

  async sweep(referenced: ReferencedKeys, opts: SweepOptions = {}): Promise<{ removed: number }> {
    const { signal } = opts;
    const cutoff = this.#now() - ORPHAN_GRACE_MS;
    let removed = 0;
    let token: string | undefined;
    do {
      signal?.throwIfAborted();
      const page = await this.#client
        .send(
          new ListObjectsV2Command({
            Bucket: this.#bucket,
            Prefix: this.#prefix,
            ContinuationToken: token,
            MaxKeys: SWEEP_PAGE,
          }),
          abortable(signal),
        )
        .catch((err: unknown) => {
          throw this.#failure(err);
        });
      const candidates = (page.Contents ?? []).flatMap((o) => {
        const key = o.Key?.slice(this.#prefix.length) ?? '';
        const old = o.LastModified !== undefined && o.LastModified.getTime() < cutoff;
        return old && this.#ours(key) ? [key] : [];
      });
      const kept = candidates.length === 0 ? NOTHING : await referenced(candidates);
      const doomed = candidates.filter((k) => !kept.has(k));
      await this.delete(doomed);
      removed += doomed.length;
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    return { removed: removed + (await this.#abortStaleUploads(cutoff, signal)) };
  }

  /** Multipart uploads a failed put could not abort (the store was down then). */
  async #abortStaleUploads(cutoff: number, signal: AbortSignal | undefined): Promise<number> {
    let aborted = 0;
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    do {
      signal?.throwIfAborted();
      const page = await this.#client
        .send(
          new ListMultipartUploadsCommand({
            Bucket: this.#bucket,
            Prefix: this.#prefix,
            KeyMarker: keyMarker,
            UploadIdMarker: uploadIdMarker,
          }),
          abortable(signal),
        )
        .catch((err: unknown) => {
          // Some S3-compatible stores do not list uploads; their lifecycle rules clean up instead.
          if (statusOf(err) === 501 || (err as SdkError).name === 'NotImplemented') return null;
          throw this.#failure(err);
        });
      if (page === null) return aborted;
      for (const u of page.Uploads ?? []) {
        const key = u.Key?.slice(this.#prefix.length) ?? '';
        if (u.Initiated === undefined || u.Initiated.getTime() >= cutoff || !this.#ours(key)) continue;
        await this.#client
          .send(new AbortMultipartUploadCommand({ Bucket: this.#bucket, Key: u.Key, UploadId: u.UploadId }))
          .catch((err: unknown) => {
            throw this.#failure(err);
          });
        aborted++;
      }
      keyMarker = page.IsTruncated ? page.NextKeyMarker : undefined;
      uploadIdMarker = page.IsTruncated ? page.NextUploadIdMarker : undefined;
    } while (keyMarker !== undefined);
    return aborted;
  }

  #objectKey(key: string): string {
    return this.#prefix + key;
  }

  /** A key a put of this store could have written; anything else under the prefix is left alone. */
  #ours(key: string): boolean {
    try {
      assertKey(key);
    } catch {
      return false;
    }
    return OBJECT_NAME.test(key);
  }

  #failure(err: unknown): Error {
    if (err instanceof BlobStoreUnavailableError || err instanceof BlobNotFoundError) return err;
    const described = new Error(`S3 bucket "${this.#bucket}" at ${this.#where}: ${describe(err)}`, { cause: err });
    return storeIsDown(err) ? new BlobStoreUnavailableError(described) : described;
  }
}

function describe(err: unknown): string {
  const e = err as SdkError;
  const status = statusOf(err);
  const name = e.code ?? e.name ?? 'Error';
  return status === undefined ? `${name}: ${e.message ?? String(err)}` : `${name} (HTTP ${status})`;
}
