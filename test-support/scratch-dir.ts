import fs from 'node:fs';
import os from 'node:os';

/** Room the suite's PostgreSQL cluster may take in memory: its databases stay until the run ends. */
const MIN_FREE_BYTES = 8 * 1024 ** 3;
const TMPFS_MAGIC = 0x01021994;
export const SHM = '/dev/shm';

type FsStats = Pick<fs.StatsFs, 'type' | 'bavail' | 'bsize'>;

/**
 * Where the suite puts what it writes most and keeps least (the shared PostgreSQL cluster, the
 * portals' data dirs): memory, /dev/shm, when it is a tmpfs with room, else os.tmpdir(). On this
 * machine's ext4 disk a copy of the migrated template cost PostgreSQL about 200 ms of CPU (file
 * creation, mostly system time), on tmpfs a sixth of it (docs/testing.md#what-keeps-the-suite-fast).
 * SVC_TEST_SCRATCH_DIR names another place.
 */
export function scratchParent(): string {
  let shm: FsStats | null = null;
  try {
    shm = fs.statfsSync(SHM);
  } catch {
    // No /dev/shm: the disk.
  }
  return chooseScratchParent(process.env['SVC_TEST_SCRATCH_DIR'], shm, os.tmpdir());
}

export function chooseScratchParent(chosen: string | undefined, shm: FsStats | null, tmpdir: string): string {
  if (chosen) return chosen;
  return shm !== null && shm.type === TMPFS_MAGIC && shm.bavail * shm.bsize >= MIN_FREE_BYTES ? SHM : tmpdir;
}
