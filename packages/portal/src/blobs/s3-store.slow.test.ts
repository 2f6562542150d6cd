import { PutObjectCommand } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  describeBlobStoreContract,
  patternBytes,
  patterned,
  readBlob,
  referencing,
  sha256,
} from '../../tests/helpers/blob-contract.ts';
import { type S3Peer, startS3Peer } from '../../tests/helpers/s3-peer.ts';
import { ConfigError } from '../config/parse.ts';
import { OWNER_TAG } from './owner.ts';
import { S3BlobStore } from './s3-store.ts';
import { BlobNotFoundError, BlobStoreUnavailableError, ORPHAN_GRACE_MS } from './store.ts';

/**
 * The S3-compatible store against a real S3 protocol peer (s3rver, tests/helpers/s3-peer.ts):
 * the contract every store keeps, then what only a remote store has: a store failing in the
 * middle of a put, a store that is down and comes back, the start-up check.
 */

let peer: S3Peer;
beforeAll(async () => {
  peer = await startS3Peer();
});
afterAll(async () => {
  await peer?.close();
});

/** What the bucket holds, seen through the protocol rather than the store. */
const objectsUnder = (prefix: string) => peer.objects(prefix);

/** Each store gets its own prefix in the one bucket, so tests see only their own objects. */
function openStore(opts: { now?: () => number } = {}) {
  const prefix = `t${randomBytes(4).toString('hex')}/blobs`;
  const store = new S3BlobStore(peer.settings(prefix), opts);
  const strip = (keys: string[]) =>
    keys.filter((k) => k.startsWith(`${prefix}/`)).map((k) => k.slice(prefix.length + 1));
  const leftovers = async () =>
    [
      ...strip(await objectsUnder(`${prefix}/`)),
      ...strip(await peer.unfinishedUploads()).map((k) => `upload:${k}`),
    ].sort();
  return { store, prefix, leftovers };
}

describeBlobStoreContract('S3BlobStore', async () => {
  let offset = 0;
  const { store, leftovers } = openStore({ now: () => Date.now() + offset });
  await store.init();
  return {
    store,
    leftovers,
    ageEverything: async () => {
      offset = ORPHAN_GRACE_MS + 60_000;
    },
    tearDown: async () => store.close(),
  };
});

describe('S3BlobStore', () => {
  it('keeps objects under its prefix and leaves other objects there alone', async () => {
    const { store, prefix } = openStore({ now: () => Date.now() + 2 * ORPHAN_GRACE_MS });
    const client = peer.client();
    try {
      await client.send(new PutObjectCommand({ Bucket: peer.bucket, Key: `${prefix}/notes/readme.txt`, Body: 'x' }));
      const put = await store.put('sessions/p', [Buffer.from('mine')]);
      expect(await objectsUnder(`${prefix}/`)).toStrictEqual([`${prefix}/notes/readme.txt`, `${prefix}/${put.key}`]);
      expect((await store.sweep(referencing())).removed).toBe(1);
      expect(await objectsUnder(`${prefix}/`)).toStrictEqual([`${prefix}/notes/readme.txt`]);
    } finally {
      client.destroy();
      store.close();
    }
  });

  // 1,200 objects written and 800 deleted by the peer: seconds on a busy machine, hence the longer bound.
  it('a sweep lists a bucket of more than 1,000 objects page by page, decides at most 1,000 keys at a time, and stops between pages when aborted', async () => {
    const { store, prefix } = openStore({ now: () => Date.now() + 2 * ORPHAN_GRACE_MS });
    const keys = Array.from(
      { length: 1200 },
      (_, i) => `sessions/many/${OWNER_TAG}-${i.toString(16).padStart(16, '0')}`,
    );
    try {
      // Straight into the peer's store: as many PutObjects take most of a busy machine's minute.
      await peer.seed(keys.map((k) => `${prefix}/${k}`));
      const listings = () => peer.requests.filter((r) => r.includes('list-type=2'));
      // Stopped on its first page: the rest is never listed, nothing is removed.
      const stopping = new AbortController();
      const reason = new Error('stopping');
      let listedBefore = listings().length;
      const stopped = store.sweep(
        async (candidates) => {
          stopping.abort(reason);
          return new Set(candidates);
        },
        { signal: stopping.signal },
      );
      await expect(stopped).rejects.toBe(reason);
      expect(listings().length - listedBefore).toBe(1);

      const kept = new Set(keys.filter((_, i) => i % 3 === 0));
      const pages: number[] = [];
      listedBefore = listings().length;
      const { removed } = await store.sweep(async (candidates) => {
        pages.push(candidates.length);
        return new Set(candidates.filter((k) => kept.has(k)));
      });
      expect(pages).toStrictEqual([1000, 200]);
      expect(removed).toBe(800);
      const paged = listings().slice(listedBefore);
      expect(paged).toHaveLength(2);
      expect(paged[1]).toContain('continuation-token=');
      expect(await objectsUnder(`${prefix}/`)).toStrictEqual([...kept].map((k) => `${prefix}/${k}`).sort());
    } finally {
      store.close();
    }
  });

  it('a store refusing a part mid-upload: the put fails as unavailable, the upload is aborted, nothing is visible', async () => {
    const { store, leftovers } = openStore();
    peer.refuse = (req, res) => {
      if (req.method !== 'PUT' || !/[?&]partNumber=2(&|$)/.test(req.url ?? '')) return false;
      req.resume();
      res.writeHead(500, { 'content-type': 'application/xml' });
      res.end('<?xml version="1.0"?><Error><Code>InternalError</Code><Message>disk full</Message></Error>');
      return true;
    };
    try {
      const err = await store.put('sessions/r', patterned(12 * 1024 * 1024)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BlobStoreUnavailableError);
      expect((err as Error).message).toBe('Session storage is unavailable, try again shortly');
      expect(peer.requests.some((r) => /^DELETE .*uploadId=/.test(r))).toBe(true);
      expect(await leftovers()).toStrictEqual([]);
    } finally {
      peer.refuse = null;
      store.close();
    }
  });

  it('a store going down mid-upload: the put fails as unavailable; nothing becomes visible, the sweep aborts the upload later', async () => {
    let offset = 0;
    const { store, leftovers } = openStore({ now: () => Date.now() + offset });
    try {
      const total = 16 * 1024 * 1024;
      // Down once the first part is out: the rest of the put and its abort meet a dead store.
      const err = await store
        .put(
          'sessions/k',
          patterned(total, 11 * 1024 * 1024, () => peer.stop()),
        )
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BlobStoreUnavailableError);
      await peer.start();
      const left = await leftovers();
      expect(left.every((k) => k.startsWith('upload:'))).toBe(true);
      // Younger than the grace period: another replica's upload in flight looks the same.
      expect((await store.sweep(referencing())).removed).toBe(0);
      offset = ORPHAN_GRACE_MS + 60_000;
      expect((await store.sweep(referencing())).removed).toBe(left.length);
      expect(await leftovers()).toStrictEqual([]);
    } finally {
      await peer.start();
      store.close();
    }
  });

  it('a store that is down: every operation fails as unavailable; back on the same port, everything works again', async () => {
    const { store } = openStore();
    try {
      const before = await store.put('sessions/o', [Buffer.from('before the outage')]);
      await peer.stop();
      for (const attempt of [
        () => store.put('sessions/o', [Buffer.from('during')]),
        () => store.get(before.key),
        () => store.delete([before.key]),
        () => store.sweep(async (keys) => new Set(keys)),
      ]) {
        await expect(attempt()).rejects.toBeInstanceOf(BlobStoreUnavailableError);
      }
      await peer.start();
      expect((await readBlob(store, before.key)).toString()).toBe('before the outage');
      const after = await store.put('sessions/o', [Buffer.from('after')]);
      expect((await readBlob(store, after.key)).toString()).toBe('after');
      await store.delete([before.key]);
      await expect(store.get(before.key)).rejects.toBeInstanceOf(BlobNotFoundError);
    } finally {
      await peer.start();
      store.close();
    }
  });

  it('a large get streams: the first bytes arrive before the whole object is read', async () => {
    const { store } = openStore();
    try {
      const total = 24 * 1024 * 1024;
      const put = await store.put('sessions/g', patterned(total));
      expect(put.sha256).toBe(sha256(await patternBytes(total)));
      const { stream, size } = await store.get(put.key);
      expect(size).toBe(total);
      const first = (await stream[Symbol.asyncIterator]().next()).value as Buffer;
      expect(first.length).toBeGreaterThan(0);
      expect(first.length).toBeLessThan(total);
      stream.destroy();
    } finally {
      store.close();
    }
  });

  describe('the start-up check (HeadBucket)', () => {
    it('a bucket that does not exist is a configuration error naming bucket and endpoint', async () => {
      const store = new S3BlobStore({ ...peer.settings(), bucket: 'no-such-bucket' });
      const err = await store.init().catch((e: unknown) => e);
      store.close();
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toBe(
        `Invalid configuration: SVC_BLOB_URL names S3 bucket "no-such-bucket" at ${peer.endpoint}, which does not exist`,
      );
    });

    it('an endpoint where nothing answers: unavailable (not a configuration error), its cause naming bucket and endpoint, never the secret', async () => {
      await peer.stop();
      const settings = peer.settings();
      const store = new S3BlobStore({
        ...settings,
        credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'secret-never-shown' },
      });
      try {
        const err = (await store.init().catch((e: unknown) => e)) as Error;
        expect(err).toBeInstanceOf(BlobStoreUnavailableError);
        const cause = err.cause as Error;
        expect(cause.message).toMatch(new RegExp(`^S3 bucket "${peer.bucket}" at ${peer.endpoint} is not reachable: `));
        expect(cause.message).not.toContain('secret-never-shown');
      } finally {
        store.close();
        await peer.start();
      }
    });
  });
});
