import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { OWNER_TAG } from '../../src/blobs/owner.ts';
import { BlobNotFoundError, type BlobStore, type ReferencedKeys } from '../../src/blobs/store.ts';

/**
 * What every blob store promises (src/blobs/store.ts), as one suite each store's test file
 * runs against its own store: `describeBlobStoreContract('FsBlobStore', setUp)`.
 */
export interface ContractHarness {
  store: BlobStore;
  /** Everything the store holds, finished or not (objects, staging files, unfinished uploads). */
  leftovers(): Promise<string[]>;
  /** Make everything stored so far older than the sweep's grace period (nothing is stored after it). */
  ageEverything(): Promise<void>;
  tearDown(): Promise<void>;
}

/** A sweep's `referenced` for a fixed set of keys; `referencing()` references nothing. */
export function referencing(...keys: string[]): ReferencedKeys {
  const set = new Set(keys);
  return async (candidates) => new Set(candidates.filter((k) => set.has(k)));
}

export const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

export async function readBlob(store: BlobStore, key: string): Promise<Buffer> {
  const { stream } = await store.get(key);
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

const CHUNK = 65_536;
const PATTERN = Buffer.from(Array.from({ length: CHUNK + 251 }, (_, i) => i % 251));

/** `total` bytes of a repeatable pattern in 64 KiB chunks, calling `after()` once `at` bytes are out. */
export async function* patterned(total: number, at = Number.POSITIVE_INFINITY, after?: () => Promise<void>) {
  let sent = 0;
  let called = false;
  while (sent < total) {
    const n = Math.min(CHUNK, total - sent);
    // A copy: a consumer may keep the chunk while the next one is made.
    const chunk = Buffer.from(PATTERN.subarray(sent % 251, (sent % 251) + n));
    sent += n;
    yield chunk;
    if (!called && sent >= at && after !== undefined) {
      called = true;
      await after();
    }
  }
}

export const patternBytes = async (total: number) => {
  const parts: Buffer[] = [];
  for await (const c of patterned(total)) parts.push(c);
  return Buffer.concat(parts);
};

export function describeBlobStoreContract(name: string, setUp: () => Promise<ContractHarness>): void {
  describe(`${name}: the blob store contract`, () => {
    const withStore = (fn: (h: ContractHarness) => Promise<void>) => async () => {
      const h = await setUp();
      try {
        await fn(h);
      } finally {
        await h.tearDown();
      }
    };

    it(
      'put streams into an object and reports size and sha256; get reads it back; nothing else is left',
      withStore(async ({ store, leftovers }) => {
        const put = await store.put('sessions/2025-03-01', [Buffer.from('hello '), Buffer.from('world')]);
        expect(put.key).toMatch(new RegExp(`^sessions/2025-03-01/${OWNER_TAG.replaceAll('.', '\\.')}-[0-9a-f]{16}$`));
        expect(put.size).toBe(11);
        expect(put.sha256).toBe(sha256('hello world'));
        const got = await store.get(put.key);
        got.stream.destroy();
        expect(got.size).toBe(11);
        expect((await readBlob(store, put.key)).toString()).toBe('hello world');
        expect(await leftovers()).toStrictEqual([put.key]);
      }),
    );

    it(
      'an empty source is an empty object',
      withStore(async ({ store }) => {
        const put = await store.put('sessions/empty', []);
        expect(put).toMatchObject({ size: 0, sha256: sha256('') });
        expect((await readBlob(store, put.key)).length).toBe(0);
      }),
    );

    it(
      'a file of several parts streams in and out byte for byte',
      withStore(async ({ store }) => {
        const total = 12 * 1024 * 1024 + 123;
        const put = await store.put('sessions/big', patterned(total));
        const expected = await patternBytes(total);
        expect(put).toMatchObject({ size: total, sha256: sha256(expected) });
        expect((await readBlob(store, put.key)).equals(expected)).toBe(true);
      }),
    );

    it(
      'a source failing at once or after several parts leaves nothing behind, with its own error',
      withStore(async ({ store, leftovers }) => {
        const failing = async function* () {
          yield Buffer.from('partial');
          throw new Error('client went away');
        };
        await expect(store.put('sessions/x', failing())).rejects.toThrow('client went away');
        const late = async function* () {
          yield* patterned(11 * 1024 * 1024);
          throw new Error('client went away late');
        };
        await expect(store.put('sessions/x', late())).rejects.toThrow('client went away late');
        expect(await leftovers()).toStrictEqual([]);
      }),
    );

    it(
      'delete removes objects, is idempotent; get of a missing object is BlobNotFoundError',
      withStore(async ({ store, leftovers }) => {
        const a = await store.put('sessions/d', [Buffer.from('a')]);
        const b = await store.put('sessions/d', [Buffer.from('b')]);
        await store.delete([a.key]);
        await expect(store.get(a.key)).rejects.toBeInstanceOf(BlobNotFoundError);
        expect((await readBlob(store, b.key)).toString()).toBe('b');
        await store.delete([b.key]);
        await store.delete([b.key]);
        await store.delete([]);
        expect(await leftovers()).toStrictEqual([]);
      }),
    );

    it(
      'refuses unsafe keys',
      withStore(async ({ store }) => {
        for (const key of ['../x', 'sessions/../../etc/passwd', '/abs', 'a//b', 'a/./b', 'a\\b', 'a/b\u0000']) {
          await expect(store.get(key)).rejects.toThrow(/unsafe blob key/);
          await expect(store.delete([key])).rejects.toThrow(/unsafe blob key/);
        }
        await expect(store.put('../x', [Buffer.from('x')])).rejects.toThrow(/unsafe blob key/);
      }),
    );

    it(
      'sweep keeps referenced objects and young ones, and removes unreferenced ones past the grace period',
      withStore(async ({ store, leftovers, ageEverything }) => {
        const kept = await store.put('sessions/s', [Buffer.from('committed')]);
        const orphan = await store.put('sessions/s', [Buffer.from('never committed')]);
        const referenced = referencing(kept.key);
        // A writer in flight looks exactly like this: written, not referenced yet.
        expect((await store.sweep(referenced)).removed).toBe(0);
        expect(await leftovers()).toStrictEqual([kept.key, orphan.key].sort());
        await ageEverything();
        expect((await store.sweep(referenced)).removed).toBe(1);
        expect(await leftovers()).toStrictEqual([kept.key]);
        expect((await readBlob(store, kept.key)).toString()).toBe('committed');
      }),
    );
  });
}
