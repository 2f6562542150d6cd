/**
 * What every release artifact shares: the versions, the output folder, reproducible tar archives
 * and the Node runtime per architecture (from the npm registry, the same `node` build the
 * repository pins).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');
/** Where the artifacts go: dist/release/, or `--out <dir>` of scripts/release/build.ts. */
let outDir = path.join(ROOT, 'dist', 'release');
export const releaseDir = (): string => outDir;
export const setReleaseDir = (dir: string): void => {
  outDir = path.resolve(dir);
};
/** Kept between builds: the Node runtimes, so a second build downloads nothing. */
const CACHE_DIR = path.join(ROOT, 'dist', 'release-cache');

export type Arch = 'amd64' | 'arm64';
export const ARCHES: readonly Arch[] = ['amd64', 'arm64'];
/** Debian's architecture names are ours; Node's npm packages name them its own way. */
const NODE_ARCH: Record<Arch, string> = { amd64: 'x64', arm64: 'arm64' };

export interface Versions {
  portal: string;
  client: string;
  node: string;
  commit: string;
  /** The commit's time, in seconds: every file in every archive carries it (reproducible builds). */
  epoch: number;
}

const readVersion = (pkg: string): string =>
  (JSON.parse(fs.readFileSync(path.join(ROOT, pkg, 'package.json'), 'utf8')) as { version: string }).version;

export function versions(): Versions {
  const git = (...args: string[]) => execFileSync('git', ['-C', ROOT, ...args], { encoding: 'utf8' }).trim();
  return {
    portal: readVersion('packages/portal'),
    client: readVersion('packages/client'),
    node: readVersion('node_modules/node'),
    commit: git('rev-parse', '--short=12', 'HEAD'),
    epoch: Number(git('log', '-1', '--format=%ct')),
  };
}

export const run = (cmd: string, args: readonly string[], cwd = ROOT, env: NodeJS.ProcessEnv = process.env): string =>
  execFileSync(cmd, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20 });

let stageRoot: string | null = null;

/** A fresh, empty staging directory, in a temporary folder of this process (two builds never share one). */
export function stage(name: string): string {
  stageRoot ??= fs.mkdtempSync(path.join(os.tmpdir(), 'svc-release-'));
  const dir = path.join(stageRoot, name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** Removes this process's staging folder. */
export function removeStages(): void {
  if (stageRoot !== null) fs.rmSync(stageRoot, { recursive: true, force: true });
  stageRoot = null;
}

/** `dir`'s last component as the archive's one top folder; same bytes for the same inputs. */
export function tarGz(dir: string, out: string, epoch: number): void {
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const tmp = `${out}.tmp`;
  run('tar', [
    '--sort=name',
    `--mtime=@${epoch}`,
    '--owner=0',
    '--group=0',
    '--numeric-owner',
    '--format=gnu',
    '-C',
    path.dirname(dir),
    '-cf',
    `${tmp}.tar`,
    path.basename(dir),
  ]);
  // -n: no name or time in the gzip header.
  run('gzip', ['-n', '-f', `${tmp}.tar`]);
  fs.renameSync(`${tmp}.tar.gz`, out);
}

/** The folder holding bin/node and LICENSE of Node `version` for Linux on `arch`. */
export function nodeRuntime(arch: Arch, version: string): string {
  const dir = path.join(CACHE_DIR, `node-v${version}-linux-${arch}`);
  if (fs.existsSync(path.join(dir, 'bin', 'node'))) return dir;
  fs.mkdirSync(CACHE_DIR, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(CACHE_DIR, '.node-'));
  const spec = `node-linux-${NODE_ARCH[arch]}@${version}`;
  const file = run('npm', ['pack', spec, '--silent', '--pack-destination', tmp]).trim().split('\n').pop() ?? '';
  run('tar', ['-xzf', path.join(tmp, file), '-C', tmp, 'package/bin/node', 'package/LICENSE']);
  fs.renameSync(path.join(tmp, 'package'), dir);
  fs.rmSync(tmp, { recursive: true, force: true });
  return dir;
}

/** Copies Node's binary and licence into `<into>/node/`. */
export function addNode(into: string, arch: Arch, version: string): void {
  const from = nodeRuntime(arch, version);
  fs.mkdirSync(path.join(into, 'node', 'bin'), { recursive: true });
  fs.copyFileSync(path.join(from, 'bin', 'node'), path.join(into, 'node', 'bin', 'node'));
  fs.chmodSync(path.join(into, 'node', 'bin', 'node'), 0o755);
  fs.copyFileSync(path.join(from, 'LICENSE'), path.join(into, 'node', 'LICENSE'));
}

/** Writes a text file; `mode` 0o755 for the launchers. */
export function write(file: string, text: string, mode = 0o644): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text, { mode });
  fs.chmodSync(file, mode);
}
