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

/** PostgreSQL refuses to run as root; when we are root we run it as the `postgres` user. */
export async function postgresUser(): Promise<RunAs> {
  if (process.getuid?.() !== 0) return {};
  const ids = async () => ({
    uid: Number((await run('id', ['-u', 'postgres'])).stdout.trim()),
    gid: Number((await run('id', ['-g', 'postgres'])).stdout.trim()),
  });
  try {
    return await ids();
  } catch {
    await run('groupadd', ['--system', 'postgres']).catch(() => undefined);
    await run('useradd', [
      '--system',
      '--gid',
      'postgres',
      '--no-create-home',
      '--shell',
      '/usr/sbin/nologin',
      'postgres',
    ]);
    return ids();
  }
}

export interface Paths {
  cluster: string;
  logDir: string;
  logFile: string;
  secrets: string;
  socketDir: string;
}

/**
 * Where a root portal keeps what the postgres user must reach but cannot where it is configured
 * (a checkout in /root, mode 700): the clusters of such data dirs, one directory per data dir
 * named by a hash of its real path (a second checkout never shares a cluster, a restart finds
 * the same one), and a copy of the PostgreSQL binaries per version. Outside every home, and
 * short enough for the Unix socket path.
 */
export const OUTSIDE_DIR = '/var/lib/svc-portal-postgres';

export interface Binaries {
  initdb: string;
  pg_ctl: string;
}

/** The cluster, its log and its socket under `serverDir`; the credentials always stay in the data dir. */
export function layout(dataDir: string, serverDir: string): Paths {
  const logDir = path.join(serverDir, 'postgres-log');
  return {
    cluster: path.join(serverDir, 'postgres'),
    logDir,
    logFile: path.join(logDir, 'postgresql.log'),
    secrets: path.join(dataDir, 'postgres-credentials.json'),
    socketDir: path.join(serverDir, 'postgres-run'),
  };
}

/** Created by us, so made traversable whatever the umask; an existing one is left as it is. */
async function makeOutsideDir(): Promise<void> {
  if ((await fs.mkdir(OUTSIDE_DIR, { recursive: true, mode: 0o755 })) !== undefined) await fs.chmod(OUTSIDE_DIR, 0o755);
}

/** Whether `who` can search `dir` (or run a file), i.e. also traverse every directory above it (asked as that user). */
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
 * the data dir. Then it lives in its own directory under OUTSIDE_DIR, prepared here
 * (owned by postgres, mode 700), with `<data dir>/postgres` a link to it; the permissions of the
 * data dir and the directories above it are left as they are.
 */
export async function locateCluster(dataDir: string, who: RunAs, env: NodeJS.ProcessEnv): Promise<Location> {
  const inDataDir = layout(dataDir, dataDir);
  if (who.uid === undefined || who.gid === undefined || (await canReach(dataDir, who, env))) {
    return { paths: inDataDir, reason: null };
  }
  const real = await fs.realpath(dataDir);
  const serverDir = path.join(OUTSIDE_DIR, createHash('sha256').update(real).digest('hex').slice(0, 16));
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

  await makeOutsideDir();
  await fs.mkdir(serverDir, { recursive: true, mode: 0o700 });
  await fs.chmod(serverDir, 0o700);
  await fs.chown(serverDir, who.uid, who.gid);
  if (linked === null) await fs.symlink(paths.cluster, link);
  return {
    paths,
    reason: `the postgres user, which runs PostgreSQL for root, cannot reach ${dataDir} (a directory above it is private)`,
  };
}

/** Directories and executables 755, other files 644: whatever root's umask was at `npm ci`. */
async function openToAll(dir: string): Promise<void> {
  await fs.chmod(dir, 0o755);
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) await openToAll(file);
    else if (entry.isFile()) await fs.chmod(file, (await fs.stat(file)).mode & 0o100 ? 0o755 : 0o644);
  }
}

/** The name of these binaries' copy under OUTSIDE_DIR: `binaries-<version of the platform package>`. */
export async function copyName(bin: Binaries): Promise<string> {
  const native = path.dirname(path.dirname(bin.initdb));
  const pkg = JSON.parse(await fs.readFile(path.join(native, '..', 'package.json'), 'utf8')) as { version: string };
  return `binaries-${pkg.version.replace(/[^\w.+-]/g, '_')}`;
}

/**
 * PostgreSQL's binaries as `who` can run them. From a checkout the postgres user cannot reach,
 * the platform package's `native/` tree (which finds its libraries and share files relative to
 * itself) is copied once per version to OUTSIDE_DIR/binaries-<version>, owned by root and
 * readable by all. A copy is made under a scratch name and renamed, so one in place is complete.
 */
export async function runnableBinaries(
  bin: Binaries,
  who: RunAs,
  env: NodeJS.ProcessEnv,
): Promise<{ bin: Binaries; reason: string | null }> {
  if (who.uid === undefined || (await canReach(bin.initdb, who, env))) return { bin, reason: null };
  const native = path.dirname(path.dirname(bin.initdb));
  const copy = path.join(OUTSIDE_DIR, await copyName(bin));
  if (
    !(await fs.stat(copy).then(
      () => true,
      () => false,
    ))
  ) {
    await makeOutsideDir();
    const scratch = `${copy}.${process.pid}.partial`;
    await fs.rm(scratch, { recursive: true, force: true });
    await fs.cp(native, scratch, { recursive: true, verbatimSymlinks: true });
    await openToAll(scratch);
    await fs.rename(scratch, copy).catch(async (err: NodeJS.ErrnoException) => {
      // Another portal put the same version in place first.
      if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
      await fs.rm(scratch, { recursive: true, force: true });
    });
  }
  const inCopy = (file: string) => path.join(copy, 'bin', path.basename(file));
  return {
    bin: { initdb: inCopy(bin.initdb), pg_ctl: inCopy(bin.pg_ctl) },
    reason: `the postgres user, which runs PostgreSQL for root, cannot reach ${native} (a directory above it is private)`,
  };
}
