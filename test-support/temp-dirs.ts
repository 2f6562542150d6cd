import fs from 'node:fs/promises';
import path from 'node:path';
import { scratchParent } from './scratch-dir.ts';

/**
 * Temp dirs the test kit makes for a test file (a portal's data dir, a CLI's HOME), removed
 * when the file ends (test-support/remove-temp-dirs.ts, a setup file): a test may hand a dir to
 * a second portal after the first one closed, so nothing is removed earlier.
 */
const made = new Set<string>();

export async function testTempDir(prefix: string): Promise<string> {
  const dir = await fs.mkdtemp(path.join(scratchParent(), prefix));
  made.add(dir);
  return dir;
}

export async function removeTestTempDirs(): Promise<void> {
  const dirs = [...made];
  made.clear();
  await Promise.all(dirs.map((dir) => fs.rm(dir, { recursive: true, force: true, maxRetries: 3 })));
}
