/**
 * A minimal Debian 12 root file system made with debootstrap from the Debian archive this machine's
 * apt uses: the container image's base (scripts/release/image.ts) and the fresh host of the install
 * test (e2e/release-install.slow.test.ts). Made once and kept as a tar in SVC_BUILD_CACHE
 * (/var/cache/svc-build by default), so later builds and test runs start from the same root.
 */
import fs from 'node:fs';
import path from 'node:path';
import { run } from './common.ts';

const SUITE = 'bookworm';
const CACHE = process.env.SVC_BUILD_CACHE ?? '/var/cache/svc-build';
/** The debootstrap variant and the packages beyond it, part of the cache's name. */
const INCLUDE = ['ca-certificates'];

/** The first `URIs:` (deb822) or `deb` line of apt's sources naming the main archive. */
export function debianMirror(sources: string): string | null {
  for (const line of sources.split('\n')) {
    const deb822 = /^URIs:\s*(\S+)/.exec(line);
    const oneLine = /^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+bookworm\s/.exec(line);
    const uri = deb822?.[1] ?? oneLine?.[1];
    if (uri !== undefined && !uri.includes('security')) return uri;
  }
  return null;
}

function aptSources(): string {
  const files = [
    '/etc/apt/sources.list',
    ...listDir('/etc/apt/sources.list.d').filter((f) => /\.(list|sources)$/.test(f)),
  ];
  return files.map((f) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '')).join('\n');
}

const listDir = (dir: string): string[] =>
  fs.existsSync(dir) ? fs.readdirSync(dir).map((f) => path.join(dir, f)) : [];

/** The cached root file system as a tar (its paths relative to `/`), made when missing. */
export function debianRootTar(): string {
  const tar = path.join(CACHE, `debian-${SUITE}-minbase-${INCLUDE.join('+')}-amd64.tar`);
  if (fs.existsSync(tar)) return tar;
  const mirror = debianMirror(aptSources());
  if (mirror === null) throw new Error('no Debian archive in /etc/apt/sources.list(.d) to debootstrap from');
  fs.mkdirSync(CACHE, { recursive: true });
  const dir = fs.mkdtempSync(path.join(CACHE, '.root-'));
  try {
    run('debootstrap', ['--variant=minbase', `--include=${INCLUDE.join(',')}`, SUITE, dir, mirror]);
    // Package lists and downloaded .debs are not part of a root file system worth keeping.
    for (const d of ['var/cache/apt/archives', 'var/lib/apt/lists']) {
      for (const f of listDir(path.join(dir, d))) if (fs.statSync(f).isFile()) fs.rmSync(f);
    }
    // The root directory's own mode is in the tar: mkdtemp's 700 would lock every user but root out.
    fs.chmodSync(dir, 0o755);
    run('tar', ['--numeric-owner', '-C', dir, '-cf', `${tar}.tmp`, '.']);
    fs.renameSync(`${tar}.tmp`, tar);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return tar;
}
