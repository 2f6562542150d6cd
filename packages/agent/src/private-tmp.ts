import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * A child `svc scan` gets a temp directory of its own as its TMPDIR, removed once the run is over
 * however it ended. The scan removes its own temp directories (the tools' output and its NSE
 * scripts: the customer's) when it exits, but one killed at SVC_SCAN_TIMEOUT or cancelled from
 * the portal goes with its whole tree at once (SIGKILL) and cannot. The run resolves only when
 * every process of the tree is gone (kit/process/kill-tree.ts), so nothing writes there any more.
 * A directory that cannot be made or removed is a warning: the scan runs, or its outcome stands.
 */
export async function withPrivateTmp<T>(
  env: NodeJS.ProcessEnv,
  warn: (message: string) => void,
  run: (env: NodeJS.ProcessEnv) => Promise<T>,
): Promise<T> {
  let dir: string;
  try {
    dir = await fs.mkdtemp(path.join(env['TMPDIR'] || os.tmpdir(), 'svcd-scan-'));
  } catch (err) {
    warn(`no private temp directory for the scan (${(err as Error).message}): it uses the shared one`);
    return run(env);
  }
  try {
    return await run({ ...env, TMPDIR: dir });
  } finally {
    await fs
      .rm(dir, { recursive: true, force: true })
      .catch((err: unknown) => warn(`the scan's temp directory was not removed: ${(err as Error).message}`));
  }
}
