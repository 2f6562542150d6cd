import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fsyncPath } from '@svc/protocol/node';
import {
  assertKey,
  BlobNotFoundError,
  type BlobStore,
  ORPHAN_GRACE_MS,
  type PutResult,
  type ReferencedKeys,
  SWEEP_PAGE,
  type SweepOptions,
} from './store.ts';
import { OWNER_TAG, writerIsGone } from './owner.ts';

/**
 * The default blob store: files under `<data dir>/blobs`. A write goes to
 * `tmp/<owner>-<random>`, is fsynced, then renamed into `objects/<key>`, so an object
 * path never holds a partial file.
 */
export class FsBlobStore implements BlobStore {
  readonly #objects: string;
  readonly #tmp: string;

  constructor(root: string) {
    this.#objects = path.join(root, 'objects');
    this.#tmp = path.join(root, 'tmp');
  }

  async init(): Promise<void> {
    await fs.mkdir(this.#objects, { recursive: true });
    await fs.mkdir(this.#tmp, { recursive: true });
  }

  async put(prefix: string, source: Readable | AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<PutResult> {
    const name = `${OWNER_TAG}-${randomBytes(8).toString('hex')}`;
    const key = `${prefix}/${name}`;
    assertKey(key);
    const tmp = path.join(this.#tmp, name);
    const hash = createHash('sha256');
    let size = 0;
    try {
      // Created before anything is written, so the cleanup below always finds the file: a stream
      // opening it lazily could create it after a failed put had already removed it.
      const created = await fs.open(tmp, 'wx', 0o600);
      const hashed = async function* () {
        for await (const chunk of source as AsyncIterable<Uint8Array>) {
          hash.update(chunk);
          size += chunk.length;
          yield chunk;
        }
      };
      await pipeline(hashed(), created.createWriteStream());
      await fsyncPath(tmp);
      const final = path.join(this.#objects, key);
      await this.#moveIntoPlace(tmp, final);
    } catch (err) {
      await fs.rm(tmp, { force: true });
      throw err;
    }
    return { key, size, sha256: hash.digest('hex') };
  }

  /**
   * Rename the staged file into its object path and make the rename durable. `delete`
   * removes a prefix directory once it is empty, which can happen between our mkdir and
   * our rename: the rename then fails with ENOENT and is retried after a new mkdir.
   */
  async #moveIntoPlace(tmp: string, final: string): Promise<void> {
    const dir = path.dirname(final);
    for (let attempt = 1; ; attempt++) {
      await fs.mkdir(dir, { recursive: true });
      try {
        await fs.rename(tmp, final);
        break;
      } catch (err) {
        const tmpStillThere = await fs.stat(tmp).then(
          () => true,
          () => false,
        );
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !tmpStillThere || attempt >= 10) throw err;
      }
    }
    // The rename lives in the directory: fsync it, or a power cut may lose a committed object.
    await fsyncPath(dir);
  }

  async get(key: string): Promise<{ stream: Readable; size: number }> {
    assertKey(key);
    const file = path.join(this.#objects, key);
    const fh = await fs.open(file, 'r').catch((err: NodeJS.ErrnoException) => {
      throw err.code === 'ENOENT' ? new BlobNotFoundError(key) : err;
    });
    const { size } = await fh.stat();
    return { stream: createReadStream('', { fd: fh }), size };
  }

  async delete(keys: string[]): Promise<void> {
    for (const key of keys) {
      assertKey(key);
      await fs.rm(path.join(this.#objects, key), { force: true });
      // Drop the session's directory once it is empty; a concurrent writer recreates it.
      await fs.rmdir(path.dirname(path.join(this.#objects, key))).catch(() => undefined);
    }
  }

  async sweep(referenced: ReferencedKeys, opts: SweepOptions = {}): Promise<{ removed: number }> {
    const { signal } = opts;
    let removed = 0;
    const now = Date.now();
    const orphaned = async (file: string, name: string) => {
      const tag = name.slice(0, name.lastIndexOf('-'));
      if (writerIsGone(tag)) return true;
      const stat = await fs.stat(file).catch(() => null);
      return stat !== null && now - stat.mtimeMs > ORPHAN_GRACE_MS;
    };
    // Staging files are never referenced: a dead writer's or an old one goes.
    for await (const files of pages(filesUnder(this.#tmp, false), signal)) {
      for (const file of files) {
        if (await orphaned(file, path.basename(file))) {
          await fs.rm(file, { force: true, recursive: true });
          removed++;
        }
      }
    }
    for await (const files of pages(filesUnder(this.#objects, true), signal)) {
      const candidates: string[] = [];
      for (const file of files) {
        if (await orphaned(file, path.basename(file)))
          candidates.push(path.relative(this.#objects, file).split(path.sep).join('/'));
      }
      if (candidates.length === 0) continue;
      const kept = await referenced(candidates);
      const doomed = candidates.filter((k) => !kept.has(k));
      await this.delete(doomed);
      removed += doomed.length;
    }
    return { removed };
  }
}

/**
 * The files under `root` (and its subdirectories when `deep`), read a directory entry at a
 * time rather than a whole tree at once. A directory removed meanwhile (`delete` drops a
 * session's once it is empty) is skipped.
 */
async function* filesUnder(root: string, deep: boolean): AsyncGenerator<string> {
  const dirs = [root];
  for (let dir = dirs.pop(); dir !== undefined; dir = dirs.pop()) {
    const handle = await fs.opendir(dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' && dir !== root) return null;
      throw err;
    });
    if (handle === null) continue;
    for await (const entry of handle) {
      const entryPath = path.join(dir, entry.name);
      if (entry.isDirectory() && deep) dirs.push(entryPath);
      else if (entry.isFile() || (entry.isDirectory() && !deep)) yield entryPath;
    }
  }
}

/** `items` in arrays of at most SWEEP_PAGE, checking `signal` before each. */
async function* pages<T>(items: AsyncIterable<T>, signal: AbortSignal | undefined): AsyncGenerator<T[]> {
  let page: T[] = [];
  signal?.throwIfAborted();
  for await (const item of items) {
    page.push(item);
    if (page.length < SWEEP_PAGE) continue;
    yield page;
    page = [];
    signal?.throwIfAborted();
  }
  if (page.length > 0) yield page;
}
