import fs from 'node:fs/promises';
import path from 'node:path';
import { connectionUrl, isRunning } from './embedded.ts';
import { layout } from './embedded-location.ts';

/**
 * The URL of the embedded server running on `dataDir` (a running portal's), or null when none
 * runs: operations tools such as the backup connect to it without taking the data dir over.
 * Port and socket directory are the running server's own (its postmaster.pid), whatever the
 * settings say now; `<data dir>/postgres` is the cluster or a link to it (embedded-location.ts).
 */
export async function runningEmbeddedUrl(dataDir: string, database = 'svc'): Promise<string | null> {
  const p = layout(dataDir, dataDir);
  const lines = (await fs.readFile(path.join(p.cluster, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port) || port <= 0 || !(await isRunning(pid)))
    return null;
  const { password } = JSON.parse(await fs.readFile(p.secrets, 'utf8')) as { password: string };
  return connectionUrl(password, port, database, lines[4]?.trim() || null);
}
