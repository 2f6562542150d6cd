import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO } from '@svc/test-support/cli';
import { createTestDatabase } from '@svc/test-support/portal';

const exec = promisify(execFile);

/** What e2e/release.slow.test.ts needs beside the release: podman as the tests run it, and a portal's readiness. */

/** A test database's URL over TCP on 127.0.0.1: the container and the chroot cannot see the cluster's socket folder. */
export const databaseOverTcp = async (): Promise<string> => {
  const url = new URL(await createTestDatabase());
  url.searchParams.delete('host');
  return url.toString();
};

export const readyz = async (port: number): Promise<number> =>
  fetch(`http://127.0.0.1:${port}/readyz`).then(
    (r) => r.status,
    () => 0,
  );

const podmanEnv = { ...process.env, CONTAINERS_CONF: path.join(REPO, 'test-support/containers.conf') };
export const podman = async (...args: string[]) => {
  try {
    const { stdout, stderr } = await exec('podman', args, { env: podmanEnv, maxBuffer: 16 << 20 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
};
