import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { processesWithLink } from '@svc/test-support/proc-stats';
import { debianRootTar } from '../../scripts/release/debian-root.ts';

const exec = promisify(execFile);

/**
 * A fresh Debian 12 host for install tests: the cached minbase root file system
 * (scripts/release/debian-root.ts) unpacked into a temporary folder and entered with chroot. It
 * shares this machine's network (its programs reach the test's servers on 127.0.0.1 and Debian's
 * archive for apt) but none of its files: nothing of the repository is inside. apt's downloaded
 * packages are kept between runs in SVC_BUILD_CACHE. `close()` kills every process whose root is
 * the folder, unmounts and removes it.
 */
export interface DebianChroot {
  dir: string;
  /** Runs argv inside, as root or as `user`, with a minimal environment plus `env`. */
  run(argv: string[], opts?: ChrootRunOptions): Promise<{ code: number; stdout: string; stderr: string }>;
  /** Starts a long-running program inside (its output collected in `output()`). */
  start(argv: string[], opts?: ChrootRunOptions): { child: ChildProcess; output(): string };
  /** Copies a file of this machine into the root, at `to` (an absolute path inside). */
  put(from: string, to: string): Promise<void>;
  close(): Promise<void>;
}

export interface ChrootRunOptions {
  env?: Record<string, string>;
  /** `name` or `uid:gid`, as chroot's --userspec takes it. */
  user?: string;
  timeoutMs?: number;
}

const APT_CACHE = path.join(process.env.SVC_BUILD_CACHE ?? '/var/cache/svc-build', 'apt-archives');
const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

function argvFor(dir: string, argv: string[], opts: ChrootRunOptions): string[] {
  const env = { PATH, HOME: '/root', LANG: 'C.UTF-8', DEBIAN_FRONTEND: 'noninteractive', ...opts.env };
  const user = opts.user === undefined ? [] : [`--userspec=${opts.user}`];
  return [...user, dir, '/usr/bin/env', '-i', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), ...argv];
}

export async function debianChroot(): Promise<DebianChroot> {
  const dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'svc-debian-')));
  const mounts: string[] = [];
  const mount = async (args: string[], at: string) => {
    await exec('mount', [...args, path.join(dir, at)]);
    mounts.push(path.join(dir, at));
  };
  const close = async () => {
    // Every process rooted in the chroot, whoever its parent.
    for (const pid of await processesWithLink('root', dir)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
    for (const m of mounts.reverse()) await exec('umount', ['-l', m]).catch(() => undefined);
    // Never into a mount left behind (the bound /dev above all): rm stays on the folder's own file system.
    await exec('rm', ['-rf', '--one-file-system', dir]);
  };
  try {
    await exec('tar', ['--numeric-owner', '-xf', debianRootTar(), '-C', dir]);
    await fs.copyFile('/etc/resolv.conf', path.join(dir, 'etc', 'resolv.conf'));
    await mount(['-t', 'proc', 'proc'], 'proc');
    await mount(['--bind', '/dev'], 'dev');
    await fs.mkdir(APT_CACHE, { recursive: true });
    await mount(['--bind', APT_CACHE], 'var/cache/apt/archives');
  } catch (err) {
    await close();
    throw err;
  }
  return {
    dir,
    async run(argv, opts = {}) {
      try {
        const { stdout, stderr } = await exec('chroot', argvFor(dir, argv, opts), {
          timeout: opts.timeoutMs ?? 120_000,
          maxBuffer: 32 << 20,
        });
        return { code: 0, stdout, stderr };
      } catch (err) {
        const e = err as { code?: number | string; stdout?: string; stderr?: string };
        return {
          code: typeof e.code === 'number' ? e.code : -1,
          stdout: e.stdout ?? '',
          stderr: e.stderr ?? String(err),
        };
      }
    },
    start(argv, opts = {}) {
      const child = spawn('chroot', argvFor(dir, argv, opts), { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
      return { child, output: () => out };
    },
    async put(from, to) {
      await fs.mkdir(path.join(dir, path.dirname(to)), { recursive: true });
      await fs.copyFile(from, path.join(dir, to));
    },
    close,
  };
}
