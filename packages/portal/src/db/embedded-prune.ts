import fs from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { processAlive } from '@svc/protocol/node';

/** A copy younger than this is kept: a portal of its version may be about to start from it. */
const FRESH_MS = 10 * 60_000;

/** The programs every running process on this host was started from (/proc/<pid>/exe); null without procfs. */
async function runningExecutables(): Promise<string[] | null> {
  const pids = await fs.readdir('/proc').catch(() => null);
  if (pids === null) return null;
  const exes = await Promise.all(
    pids.filter((name) => /^\d+$/.test(name)).map((pid) => fs.readlink(`/proc/${pid}/exe`).catch(() => null)),
  );
  return exes.filter((exe): exe is string => exe !== null);
}

/**
 * Removes the copies of the embedded PostgreSQL binaries (`binaries-<version>`, made for a root
 * portal whose checkout the postgres user cannot reach, embedded-location.ts) other than `keep`,
 * the running version's: an upgrade leaves the old one behind. A copy is kept while anything
 * runs from it: another portal of an older version on this host runs its postgres (and each
 * backend) from the copy's bin/, so /proc/<pid>/exe of those processes points into it. That
 * covers a server whatever cluster it serves, where a cluster's postmaster.pid would need every
 * cluster found first. A copy made in the last minutes is kept too (a portal of that version
 * may be between copying and starting), and so is a copy in progress (`.<pid>.partial`) whose
 * maker still runs. Without procfs nothing is removed: what is in use cannot be told.
 * Returns the directories removed.
 */
export async function pruneBinaryCopies(dir: string, keep: string, logger: Logger): Promise<string[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  const candidates = entries.filter((e) => e.isDirectory() && e.name.startsWith('binaries-') && e.name !== keep);
  if (candidates.length === 0) return [];
  const exes = await runningExecutables();
  if (exes === null) return [];
  const removed: string[] = [];
  const inUse: string[] = [];
  for (const entry of candidates) {
    const copy = path.join(dir, entry.name);
    const maker = /\.(\d+)\.partial$/.exec(entry.name);
    if (maker !== null && processAlive(Number(maker[1]))) continue;
    if (maker === null && Date.now() - (await fs.stat(copy)).mtimeMs < FRESH_MS) continue;
    if (exes.some((exe) => exe.startsWith(`${copy}/`))) {
      inUse.push(copy);
      continue;
    }
    await fs.rm(copy, { recursive: true, force: true });
    removed.push(copy);
  }
  if (removed.length > 0) logger.info({ removed }, 'removed copies of other embedded PostgreSQL versions');
  if (inUse.length > 0)
    logger.info(
      { kept: inUse },
      'kept copies of other embedded PostgreSQL versions: a process on this host runs from them',
    );
  return removed;
}
