import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { SessionDirError, sessionPath, within } from '../kit/session-dir/root.ts';
import { fsyncPathSync, processAlive, replaceFileSync } from '@svc/protocol/node';

/**
 * Writes one session directory atomically: every file goes into a temp directory inside the
 * root (`.tmp-<id>-<pid>-<random>`), each file and the directory are fsynced, and only then is
 * the directory renamed to the id (and the root fsynced). A process killed at any point leaves
 * either no `<id>` directory or a whole one; its leftover temp directory is ignored by
 * listings (not a session id) and removed by the next write into the root, once the process
 * that made it is gone.
 */

export const TEMP_PREFIX = '.tmp-';
const OLD_PREFIX = '.old-';
const FILE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/;
const FILE_MODE = 0o644;

export interface OutFile {
  name: string;
  content: string | Uint8Array;
}

export interface WriteOptions {
  /** Replace an existing session of the same id (the synthetic generator's rerun); otherwise a clash is refused. */
  replace?: boolean;
  /** Called after each step (tests stop a process at a chosen step to prove atomicity). */
  onStep?: (step: string) => void;
}

const pidOf = (name: string): number | null => {
  const m = /^\.(?:tmp|old)-\d{8}_\d{6}-(\d+)-/.exec(name);
  return m ? Number(m[1]) : null;
};

/** Removes temp directories left by runs that died mid-write (a running writer's are kept). */
export function cleanStale(root: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(root);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!name.startsWith(TEMP_PREFIX) && !name.startsWith(OLD_PREFIX)) continue;
    const pid = pidOf(name);
    if (pid !== null && processAlive(pid)) continue;
    fs.rmSync(within(root, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

function writeFileSynced(file: string, content: string | Uint8Array): void {
  const fd = fs.openSync(file, 'wx', FILE_MODE);
  try {
    fs.writeFileSync(fd, content);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

const exists = (p: string) => fs.existsSync(p);

/** Writes `files` as session `id` under `root`; returns the session directory's path. */
export function writeSessionDir(root: string, id: string, files: readonly OutFile[], opts: WriteOptions = {}): string {
  const step = opts.onStep ?? (() => {});
  const base = path.resolve(root);
  const final = sessionPath(base, id);
  for (const f of files)
    if (!FILE_NAME.test(f.name))
      throw new SessionDirError('session.bad_name', `${JSON.stringify(f.name)} is not a plain file name`);
  fs.mkdirSync(base, { recursive: true });
  cleanStale(base);
  if (!opts.replace && exists(final))
    throw new SessionDirError(
      'session.exists',
      `session ${id} already exists in ${base} (a run started in the same second)`,
    );
  // mkdir (not mkdtemp, which makes it private): the session directory gets the usual mode.
  const temp = path.join(base, `${TEMP_PREFIX}${id}-${process.pid}-${randomBytes(6).toString('hex')}`);
  fs.mkdirSync(temp);
  step('temp-created');
  try {
    for (const f of files) {
      writeFileSynced(within(temp, f.name), f.content);
      step(`file-written:${f.name}`);
    }
    fsyncPathSync(temp);
    step('files-synced');
    if (opts.replace && exists(final)) {
      const old = path.join(base, `${OLD_PREFIX}${id}-${process.pid}-${randomBytes(6).toString('hex')}`);
      fs.mkdirSync(old);
      fs.renameSync(final, path.join(old, id));
      step('old-moved');
      fs.renameSync(temp, final);
      fs.rmSync(old, { recursive: true, force: true });
    } else {
      try {
        fs.renameSync(temp, final);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOTEMPTY' || code === 'EEXIST')
          throw new SessionDirError(
            'session.exists',
            `session ${id} already exists in ${base} (a run started in the same second)`,
          );
        throw err;
      }
    }
    step('renamed');
    fsyncPathSync(base);
    step('root-synced');
    return final;
  } finally {
    if (exists(temp)) fs.rmSync(temp, { recursive: true, force: true });
  }
}

/**
 * Replaces one file of a written session directory (the upload's benchmark block, the portal's
 * triage merged in, the reports rendered again): durably, with the mode the writer gave it, so a
 * power cut leaves the old file or the new one and the session stays whole.
 */
export function replaceSessionFile(file: string, content: string): void {
  replaceFileSync(file, content, { durable: true, mode: FILE_MODE });
}
