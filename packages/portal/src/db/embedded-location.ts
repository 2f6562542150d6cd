import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The user PostgreSQL runs as: unset (the portal's own) unless the portal is root. */
export interface RunAs {
  uid?: number;
  gid?: number;
}

export interface Paths {
  cluster: string;
  logDir: string;
  logFile: string;
  secrets: string;
  socketDir: string;
}

/**
 * Where a root portal keeps the clusters of data dirs the postgres user cannot reach (a checkout
 * in /root, mode 700): one directory per data dir, named by a hash of its real path, so a second
 * checkout never shares a cluster and a restart finds the same one. Outside every home, readable
 * only by postgres, and short enough for the Unix socket path.
 */
export const OUTSIDE_CLUSTERS_DIR = '/var/lib/svc-portal-postgres';

/** The cluster, its log and its socket under `serverDir`; the credentials always stay in the data dir. */
function layout(dataDir: string, serverDir: string): Paths {
  const logDir = path.join(serverDir, 'postgres-log');
  return {
    cluster: path.join(serverDir, 'postgres'),
    logDir,
    logFile: path.join(logDir, 'postgresql.log'),
    secrets: path.join(dataDir, 'postgres-credentials.json'),
    socketDir: path.join(serverDir, 'postgres-run'),
  };
}

/** Whether `who` can search `dir`, i.e. traverse it and every directory above it (asked as that user). */
async function canReach(dir: string, who: RunAs, env: NodeJS.ProcessEnv): Promise<boolean> {
  try {
    await run('test', ['-x', dir], { ...who, env, cwd: '/' });
    return true;
  } catch (err) {
    if ((err as { code?: unknown }).code === 1) return false;
    throw err;
  }
}

export interface Location {
  paths: Paths;
  /** Why the cluster is not in the data dir; null when it is. */
  reason: string | null;
}

/**
 * The cluster lives in the data dir unless the portal is root and the postgres user cannot reach
 * the data dir. Then it lives in its own directory under OUTSIDE_CLUSTERS_DIR, prepared here
 * (owned by postgres, mode 700), with `<data dir>/postgres` a link to it; the permissions of the
 * data dir and the directories above it are left as they are.
 */
export async function locateCluster(dataDir: string, who: RunAs, env: NodeJS.ProcessEnv): Promise<Location> {
  const inDataDir = layout(dataDir, dataDir);
  if (who.uid === undefined || who.gid === undefined || (await canReach(dataDir, who, env))) {
    return { paths: inDataDir, reason: null };
  }
  const real = await fs.realpath(dataDir);
  const serverDir = path.join(OUTSIDE_CLUSTERS_DIR, createHash('sha256').update(real).digest('hex').slice(0, 16));
  const paths = layout(dataDir, serverDir);

  const link = inDataDir.cluster;
  const linked = await fs.readlink(link).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    if (err.code === 'EINVAL') return ''; // a directory or file, not a link
    throw err;
  });
  if (linked !== null && linked !== paths.cluster) {
    throw new Error(
      `${link} is not a link to ${paths.cluster}, where this data directory's cluster must live: PostgreSQL runs as the postgres user here, and that user cannot reach ${dataDir}. Move the cluster there (owned by postgres), make the directories above ${dataDir} traversable by postgres, or remove ${link} to start an empty database.`,
    );
  }

  // Created by us, so made traversable whatever the umask; an existing one is left as it is.
  if ((await fs.mkdir(OUTSIDE_CLUSTERS_DIR, { recursive: true, mode: 0o755 })) !== undefined) {
    await fs.chmod(OUTSIDE_CLUSTERS_DIR, 0o755);
  }
  await fs.mkdir(serverDir, { recursive: true, mode: 0o700 });
  await fs.chmod(serverDir, 0o700);
  await fs.chown(serverDir, who.uid, who.gid);
  if (linked === null) await fs.symlink(paths.cluster, link);
  return {
    paths,
    reason: `the postgres user, which runs PostgreSQL for root, cannot reach ${dataDir} (a directory above it is private)`,
  };
}
