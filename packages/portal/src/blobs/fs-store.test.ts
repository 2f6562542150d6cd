import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FsBlobStore } from './fs-store.ts';
import { describeBlobStoreContract, referencing } from '../../tests/helpers/blob-contract.ts';
import { OWNER_TAG } from './owner.ts';

/** The file-system blob store: the contract every store keeps, then what only files have (directories, writer tags). */

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

/** A pid that certainly does not run any more: a child that has exited and been reaped. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', '0']);
  if (r.pid === undefined) throw new Error('could not spawn');
  return r.pid;
}

describeBlobStoreContract('FsBlobStore', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-blobs-'));
  const store = new FsBlobStore(dir);
  await store.init();
  const filesIn = (sub: string) => filesUnder(path.join(dir, sub));
  return {
    store,
    // Staging files count: a failed put must not leave one behind.
    leftovers: async () => [...(await filesIn('objects')), ...(await filesIn('tmp')).map((f) => `tmp/${f}`)].sort(),
    ageEverything: async () => {
      const old = new Date(Date.now() - 2 * 3600_000);
      for (const f of await filesUnder(dir)) await fs.utimes(path.join(dir, f), old, old);
    },
    tearDown: () => fs.rm(dir, { recursive: true, force: true }),
  };
});

describe('FsBlobStore', () => {
  let root: string;
  let store: FsBlobStore;

  beforeEach(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-blobs-'));
    store = new FsBlobStore(root);
    await store.init();
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await fs.rm(root, { recursive: true, force: true });
  });

  const read = async (key: string) => {
    const { stream } = await store.get(key);
    const chunks: Buffer[] = [];
    for await (const c of stream) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  };

  it('delete removes the directory of a prefix once it is empty', async () => {
    const a = await store.put('sessions/d', [Buffer.from('a')]);
    const b = await store.put('sessions/d', [Buffer.from('b')]);
    await store.delete([a.key]);
    expect((await read(b.key)).toString()).toBe('b');
    await store.delete([b.key]);
    await expect(fs.stat(path.join(root, 'objects', 'sessions', 'd'))).rejects.toThrow(/ENOENT/);
  });

  it('a put survives a concurrent delete emptying (and removing) its prefix directory', async () => {
    const dir = path.join(root, 'objects', 'sessions', 'race');
    const realRename = fs.rename.bind(fs);
    let removedDir = false;
    // Exactly between the put's mkdir and its rename, a delete removes the last object of
    // The prefix and with it the directory.
    vi.spyOn(fs, 'rename').mockImplementation(async (from, to) => {
      if (!removedDir && String(to).startsWith(dir)) {
        removedDir = true;
        await fs.rmdir(dir);
      }
      return realRename(from, to);
    });
    const put = await store.put('sessions/race', [Buffer.from('survives')]);
    expect(removedDir).toBe(true);
    expect((await read(put.key)).toString()).toBe('survives');
  });

  describe('sweep', () => {
    const host = OWNER_TAG.split('.')[0]!;

    it('removes staging files and unreferenced objects of a dead writer, keeps everything else', async () => {
      const dead = `${host}.${deadPid()}.deadbeef`;
      const otherHost = `ffffffff.${deadPid()}.deadbeef`;
      await fs.writeFile(path.join(root, 'tmp', `${dead}-0000000000000001`), 'half an upload');
      await fs.writeFile(path.join(root, 'tmp', `${otherHost}-0000000000000002`), 'another host, maybe alive');
      await fs.mkdir(path.join(root, 'objects', 'sessions', 'old'), { recursive: true });
      await fs.writeFile(path.join(root, 'objects', 'sessions', 'old', `${dead}-0000000000000003`), 'never committed');
      await fs.writeFile(path.join(root, 'objects', 'sessions', 'old', `${dead}-0000000000000004`), 'committed');
      const mine = await store.put('sessions/new', [Buffer.from('live writer, not referenced yet')]);
      const { removed } = await store.sweep(referencing(`sessions/old/${dead}-0000000000000004`));
      expect(removed).toBe(2);
      expect(await filesUnder(path.join(root, 'tmp'))).toStrictEqual([`${otherHost}-0000000000000002`]);
      expect(await filesUnder(path.join(root, 'objects'))).toStrictEqual(
        [
          path.join('sessions', 'new', mine.key.split('/').at(-1)!),
          path.join('sessions', 'old', `${dead}-0000000000000004`),
        ].sort(),
      );
    });

    it('goes page by page (1,200 orphans in several directories, at most 1,000 keys at a time) and stops between pages when aborted', async () => {
      const dead = `${host}.${deadPid()}.deadbeef`;
      const keys = Array.from(
        { length: 1200 },
        (_, i) => `sessions/d${i % 4}/${dead}-${i.toString(16).padStart(16, '0')}`,
      );
      for (let d = 0; d < 4; d++) await fs.mkdir(path.join(root, 'objects', 'sessions', `d${d}`), { recursive: true });
      for (let i = 0; i < keys.length; i += 100)
        await Promise.all(
          keys.slice(i, i + 100).map((key) => fs.writeFile(path.join(root, 'objects', ...key.split('/')), 'x')),
        );

      // Stopped on its first page: nothing is removed, the second page is never read.
      const stopping = new AbortController();
      const reason = new Error('stopping');
      const seen: number[] = [];
      const stopped = store.sweep(
        async (candidates) => {
          seen.push(candidates.length);
          stopping.abort(reason);
          return new Set(candidates);
        },
        { signal: stopping.signal },
      );
      await expect(stopped).rejects.toBe(reason);
      expect(seen).toStrictEqual([1000]);
      expect(await filesUnder(path.join(root, 'objects'))).toHaveLength(1200);

      const kept = new Set(keys.filter((_, i) => i % 5 === 0));
      const pages: number[] = [];
      const { removed } = await store.sweep(async (candidates) => {
        pages.push(candidates.length);
        return new Set(candidates.filter((k) => kept.has(k)));
      });
      expect(pages).toStrictEqual([1000, 200]);
      expect(removed).toBe(960);
      expect(await filesUnder(path.join(root, 'objects'))).toStrictEqual(
        [...kept].map((k) => path.join(...k.split('/'))).sort(),
      );
    });

    it('a previous run of this same pid (a restarted container, pid 1 again) counts as gone', async () => {
      const previous = `${host}.${process.pid}.0badc0de`;
      await fs.writeFile(path.join(root, 'tmp', `${previous}-0000000000000001`), 'x');
      expect((await store.sweep(referencing())).removed).toBe(1);
    });

    it('leftovers of writers it cannot judge go after the grace period', async () => {
      const foreign = path.join(root, 'tmp', 'ffffffff.1.cafe-0000000000000001');
      await fs.writeFile(foreign, 'x');
      expect((await store.sweep(referencing())).removed).toBe(0);
      const old = new Date(Date.now() - 2 * 3600_000);
      await fs.utimes(foreign, old, old);
      expect((await store.sweep(referencing())).removed).toBe(1);
    });
  });
});
