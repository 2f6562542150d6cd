import fs from 'node:fs';
import path from 'node:path';
import { CLIENT_RELEASE_MARKER, RELEASE_VERSION_PATTERN } from '@svc/protocol';
import { ReleaseError } from './checksums.ts';

/**
 * A release install on disk (docs/agent.md "Release install"):
 *   <root>/releases/<version>/   an unpacked client archive's folder, renamed to its version
 *   <root>/current               symlink to releases/<version>, the one the unit runs
 * Work in progress lives in dot-names under releases/ (same file system: renames are atomic).
 */

export const RELEASES = 'releases';
export const CURRENT = 'current';
/** Prefix of the download and unpack folders of an update under way (or cut short: pruned later). */
export const WORK_PREFIX = '.update-';

/** `releases/<version>` from a release's folder, or from where `current` points. */
export const releaseLink = (version: string): string => `${RELEASES}/${version}`;

/** The version `current` points at (null when it is missing); refused when it is not a symlink. */
export function currentVersion(root: string): string | null {
  const link = path.join(root, CURRENT);
  let st: fs.Stats;
  try {
    st = fs.lstatSync(link);
  } catch {
    return null;
  }
  if (!st.isSymbolicLink())
    throw new ReleaseError(`${link} is not a symlink: a release install runs releases/<version> through it`);
  return path.basename(fs.readlinkSync(link));
}

/** The release's version as its RELEASE file says, or null without one. */
export function markedVersion(dir: string): string | null {
  try {
    return fs.readFileSync(path.join(dir, CLIENT_RELEASE_MARKER), 'utf8').trim();
  } catch {
    return null;
  }
}

/**
 * What tar unpacked into `into`: exactly the archive's folder, with the version in RELEASE and
 * a bin/svcd to run. Returns the folder.
 */
export function checkUnpacked(into: string, folder: string, version: string): string {
  const entries = fs.readdirSync(into);
  if (entries.length !== 1 || entries[0] !== folder)
    throw new ReleaseError(`the archive holds ${entries.join(', ') || 'nothing'}, not the one folder ${folder}`);
  const dir = path.join(into, folder);
  if (!fs.lstatSync(dir).isDirectory()) throw new ReleaseError(`${folder} in the archive is not a folder`);
  const marked = markedVersion(dir);
  if (marked !== version)
    throw new ReleaseError(`the archive's ${CLIENT_RELEASE_MARKER} says ${marked ?? 'nothing'}, not ${version}`);
  if (!fs.existsSync(path.join(dir, 'bin', 'svcd'))) throw new ReleaseError(`the archive has no ${folder}/bin/svcd`);
  return dir;
}

/** Points `current` at releases/<version> in one step: a new symlink renamed over the old one. */
export function switchCurrent(root: string, version: string): void {
  const next = path.join(root, `${WORK_PREFIX}${CURRENT}-${process.pid}`);
  fs.rmSync(next, { force: true });
  fs.symlinkSync(releaseLink(version), next);
  fs.renameSync(next, path.join(root, CURRENT));
}

/**
 * Removes every release folder but `keep` (the new current, the previous one for a rollback and
 * the one running), and what an update cut short left behind. Returns the releases removed.
 */
export function prune(root: string, keep: ReadonlySet<string>): string[] {
  const dir = path.join(root, RELEASES);
  const removed: string[] = [];
  for (const name of fs.readdirSync(dir).sort()) {
    const work = name.startsWith(WORK_PREFIX);
    if (!work && (!RELEASE_VERSION_PATTERN.test(name) || keep.has(name))) continue;
    fs.rmSync(path.join(dir, name), { recursive: true, force: true });
    if (!work) removed.push(name);
  }
  return removed;
}
