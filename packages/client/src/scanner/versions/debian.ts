import type { VulnIndexDebian, VulnIndexDebianPackage } from '@svc/protocol';
import { debianAtLeast, splitDebianVersion } from './compare.ts';

/**
 * A Debian package seen in a banner (`OpenSSH_9.2p1 Debian-2+deb12u3`) or a package inventory,
 * judged by the Debian security tracker's fixed versions (docs/vuln-matching.md, "Distribution
 * packages"). Which release the package belongs to follows from its revision: a `+debNNuM` or
 * `~debNNuM` suffix names the release by number (12 is bookworm); a revision without one (`2`) is
 * of the releases whose repositories hold the same upstream version; a backport (`~bpo12+1`) is
 * of no release the tracker follows.
 */

const parsed = new WeakMap<VulnIndexDebian, Map<string, VulnIndexDebianPackage | null>>();

/**
 * A source package of the index's Debian section, or null. The index reader keeps each package
 * as its JSON text (read-vuln-index.ts, VULN_INDEX_RAW_MEMBERS): it is parsed here on first use
 * and kept; a package that is not what the index's format says is no package.
 */
export function debianPackage(debian: VulnIndexDebian, name: string): VulnIndexDebianPackage | null {
  if (!Object.hasOwn(debian, name)) return null;
  let known = parsed.get(debian);
  if (known === undefined) {
    known = new Map();
    parsed.set(debian, known);
  }
  const hit = known.get(name);
  if (hit !== undefined) return hit;
  const held: unknown = debian[name];
  let value: unknown = held;
  if (typeof held === 'string') {
    try {
      value = JSON.parse(held);
    } catch {
      value = null;
    }
  }
  const pkg = value as Partial<VulnIndexDebianPackage> | null;
  const usable =
    typeof pkg === 'object' &&
    pkg !== null &&
    typeof pkg.releases === 'object' &&
    pkg.releases !== null &&
    Array.isArray(pkg.cves)
      ? (pkg as VulnIndexDebianPackage)
      : null;
  known.set(name, usable);
  return usable;
}

/** Debian's release numbers and code names (https://www.debian.org/releases/). */
export const DEBIAN_RELEASES: Readonly<Record<number, string>> = {
  7: 'wheezy',
  8: 'jessie',
  9: 'stretch',
  10: 'buster',
  11: 'bullseye',
  12: 'bookworm',
  13: 'trixie',
  14: 'forky',
  15: 'duke',
};

const SUFFIX = /[+~]deb(\d+)(?:u\d+)?/;
const BACKPORT = /~bpo\d+/;

/** A package version as a banner shows it: the upstream version and the Debian revision (no epoch). */
export interface DebianPackageVersion {
  upstream: string;
  revision: string;
}

export type DebianRelease = { releases: string[]; by: 'suffix' | 'repository' } | { releases: []; why: string };

/** The release(s) a package version belongs to, by the rule above. */
export function debianReleaseOf(v: DebianPackageVersion, pkg: VulnIndexDebianPackage): DebianRelease {
  if (BACKPORT.test(v.revision))
    return { releases: [], why: `${v.revision} is a backport, which the Debian security tracker does not follow` };
  const suffix = SUFFIX.exec(v.revision);
  if (suffix !== null) {
    const release = DEBIAN_RELEASES[Number(suffix[1])];
    return release === undefined
      ? { releases: [], why: `Debian ${suffix[1]} is a release this svc does not know` }
      : { releases: [release], by: 'suffix' };
  }
  const upstream = v.upstream.toLowerCase();
  const same = Object.entries(pkg.releases)
    .filter(([, versions]) => versions.some((held) => splitDebianVersion(held).upstream.toLowerCase() === upstream))
    .map(([release]) => release)
    .sort();
  return same.length > 0
    ? { releases: same, by: 'repository' }
    : { releases: [], why: `no Debian release's repositories hold upstream version ${v.upstream}` };
}

/** The tracker's verdict on one CVE for the package as seen. */
export type DebianVerdict =
  | { state: 'fixed'; fixed: string }
  | { state: 'vulnerable'; fixed: string | null; unimportant: boolean }
  /** The candidate releases disagree, or none has a verdict. */
  | { state: 'unknown' };

export interface DebianJudgement {
  /** The release the verdicts are for (`bookworm`; `trixie or sid` when the revision fits several that agree). */
  release: string;
  /** By CVE position in the index. */
  verdicts: ReadonlyMap<number, DebianVerdict>;
}

function verdictIn(
  v: DebianPackageVersion,
  entry: VulnIndexDebianPackage['cves'][number],
  release: string,
): DebianVerdict {
  if (!Object.hasOwn(entry.fixed, release)) return { state: 'unknown' };
  const fixed = entry.fixed[release] ?? null;
  if (fixed !== null && debianAtLeast(v.upstream, v.revision, fixed)) return { state: 'fixed', fixed };
  return { state: 'vulnerable', fixed, unimportant: entry.unimportant?.includes(release) === true };
}

const same = (a: DebianVerdict, b: DebianVerdict) =>
  a.state === b.state && (a.state === 'unknown' || a.fixed === (b as typeof a).fixed);

/**
 * The tracker's verdicts on every CVE it lists for the package, for the release(s) the version
 * belongs to; a reason instead when the release cannot be told or the tracker has no word on it.
 * Over several candidate releases a CVE gets a verdict only when all of them agree.
 */
export function judgeDebianPackage(
  v: DebianPackageVersion,
  pkg: VulnIndexDebianPackage,
): DebianJudgement | { why: string } {
  const found = debianReleaseOf(v, pkg);
  if (found.releases.length === 0) return { why: 'why' in found ? found.why : 'no release' };
  const releases = found.releases.filter((r) => pkg.cves.some((c) => Object.hasOwn(c.fixed, r)));
  if (releases.length === 0)
    return { why: `the Debian security tracker has no ${found.releases.join(' or ')} verdicts for this package` };
  const verdicts = new Map<number, DebianVerdict>();
  for (const entry of pkg.cves) {
    const each = releases.map((r) => verdictIn(v, entry, r));
    const first = each[0] as DebianVerdict;
    const agreed = each.every((x) => same(x, first)) ? first : { state: 'unknown' as const };
    if (agreed.state !== 'unknown') verdicts.set(entry.cve, agreed);
  }
  return { release: releases.join(' or '), verdicts };
}
