import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * Replacing a file whole (docs/decisions.md#replacing-a-file-durable-or-not): the content goes to
 * a new temp file in the target's directory (one file system, so the rename is atomic), created
 * exclusively under a name no other writer uses and with its mode from creation, then renamed
 * over the target. A reader sees the old file or the new one, never part of one; writers racing
 * on one file each leave a whole file (the last rename wins). A failure removes the temp file and
 * is thrown. The directory must exist: its mode is the caller's business.
 */
export interface ReplaceOptions {
  /**
   * true: the temp file is fsynced before the rename and the directory after it, so a crash or a
   * power cut leaves the old content or the new, never an empty file, and a returned call is on
   * disk. false: rename only; a power cut may lose the write (or, on some file systems, leave an
   * empty file), which suits caches and output that is written again anyway.
   */
  durable: boolean;
  /** The new file's mode, given at creation (the umask applies, as to any new file): 0o666 unless said. */
  mode?: number;
}

export type ReplaceContent = string | Uint8Array | Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>;

const TEMP_TAIL = /^\d+-[0-9a-f]{12}\.tmp$/;

/** `.<name>.<pid>-<random>.tmp` beside `file`: hidden from listings, unique to this call. */
function tempOf(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`);
}

/**
 * The temp files of `file` that writers killed mid-write left in its directory. A running writer's
 * temp file is listed too: remove them only where no other writer can be at work.
 */
export function leftoverTemps(file: string): string[] {
  const dir = path.dirname(file);
  const head = `.${path.basename(file)}.`;
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((n) => n.startsWith(head) && TEMP_TAIL.test(n.slice(head.length))).map((n) => path.join(dir, n));
}

/** fsync a file or a directory by its path (a directory's entries: a rename or a new file in it). */
export function fsyncPathSync(p: string): void {
  const fd = fs.openSync(p, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** fsyncPathSync without blocking the event loop. */
export async function fsyncPath(p: string): Promise<void> {
  const fh = await fsp.open(p, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Replaces `file` with `content` (see ReplaceOptions for what `durable` promises). */
export function replaceFileSync(file: string, content: string | Uint8Array, opts: ReplaceOptions): void {
  const tmp = tempOf(file);
  const fd = fs.openSync(tmp, 'wx', opts.mode ?? 0o666);
  try {
    try {
      fs.writeFileSync(fd, content);
      if (opts.durable) fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  if (opts.durable) fsyncPathSync(path.dirname(file));
}

/**
 * replaceFileSync for content that may come in pieces (a generator of lines: written as it is
 * produced, never joined in memory); a piece that throws fails the call and leaves the old file.
 */
export async function replaceFile(file: string, content: ReplaceContent, opts: ReplaceOptions): Promise<void> {
  const tmp = tempOf(file);
  // Created before anything is written, so the cleanup below always finds the file.
  const fh = await fsp.open(tmp, 'wx', opts.mode ?? 0o666);
  // `flush`: fsync before the stream closes the file, which the pipeline waits for.
  const out = fh.createWriteStream({ flush: opts.durable });
  try {
    const pieces = typeof content === 'string' || content instanceof Uint8Array ? [content] : content;
    await pipeline(Readable.from(pieces), out);
    await fsp.rename(tmp, file);
  } catch (err) {
    out.destroy();
    await fsp.rm(tmp, { force: true });
    throw err;
  }
  if (opts.durable) await fsyncPath(path.dirname(file));
}
