import { productKeysOf } from './cpe-aliases.ts';
import { cpeProductKey, orderedVersion, type VulnIndex, type VulnIndexCve, type VulnIndexRange } from '@svc/protocol';
import type { NmapService } from '../parse/types.ts';
import { compareVersionKeys, releaseKey, type VersionKey } from './compare.ts';
import { debianPackageOf } from './debian-packages.ts';
import { type DebianJudgement, debianPackage, judgeDebianPackage } from './debian.ts';
import { observedVersion, type ObservedVersion } from './match.ts';

/**
 * Services against the vulnerability index (docs/vuln-matching.md). A service matches a CVE when
 * one of its CPEs names a product of the index (`part:vendor:product`) and the version nmap
 * reported falls in one of that product's ranges, with NVD's bounds. A product name without a
 * CPE matches nothing: the index is keyed by vendor and product, and guessing the vendor from a
 * banner would pair unrelated products. A service without a comparable version matches nothing.
 * When the banner names a Debian revision and the index holds the Debian security tracker's
 * verdicts for the package, those decide: a CVE fixed in that revision is left out, one not
 * fixed is confirmed (whether or not an NVD range names it).
 */

/** How a match was made: on the upstream version alone (potential), or by the distribution's fixed version (confirmed). */
export type VulnMatchBasis =
  | {
      kind: 'version_range';
      /** Why a Debian revision the banner names could not decide (null without one). */
      debianNote: string | null;
    }
  | {
      kind: 'distribution_package';
      distribution: 'debian';
      release: string;
      package: string;
      /** The package as seen: upstream-revision. */
      version: string;
      /** The release's fixed version; null while the tracker lists the CVE open. */
      fixed: string | null;
      /** Whether an NVD range names the CVE for the upstream version too. */
      inRange: boolean;
      unimportant: boolean;
    };

export interface VulnMatch {
  cve: VulnIndexCve;
  /** The product key of the service's CPE that matched. */
  product: string;
  /** The CPE that matched, as nmap wrote it. */
  cpe: string;
  observed: ObservedVersion;
  basis: VulnMatchBasis;
}

/**
 * What matching needs of one index, built once: the product table as a map, and per
 * (product, version) the CVEs already found (services of a network repeat the same few
 * versions). The CVE ids are mapped on first use by enrichment only.
 */
export interface VulnLookup {
  index: VulnIndex;
  products: ReadonlyMap<string, readonly VulnIndexRange[]>;
  /** A product's ranges with their bounds split into version keys, on the product's first match. */
  prepared: Map<string, readonly PreparedRange[]>;
  /** Each bound's key once: ranges of a product repeat the same few versions. */
  keys: Map<string, VersionKey>;
  memo: Map<string, readonly number[]>;
  /** Per package and version seen, the Debian tracker's verdicts (or why there are none). */
  debianMemo: Map<string, PackageJudgement>;
  byId: Map<string, VulnIndexCve> | null;
}

interface PreparedRange {
  cve: number;
  version?: VersionKey | undefined;
  startIncluding?: VersionKey | undefined;
  startExcluding?: VersionKey | undefined;
  endIncluding?: VersionKey | undefined;
  endExcluding?: VersionKey | undefined;
}

function prepare(keys: Map<string, VersionKey>, r: VulnIndexRange): PreparedRange {
  const keyOf = (v: string | undefined) => {
    if (v === undefined) return undefined;
    let key = keys.get(v);
    if (key === undefined) {
      key = releaseKey(v);
      keys.set(v, key);
    }
    return key;
  };
  return {
    cve: r.cve,
    version: keyOf(r.version),
    startIncluding: keyOf(r.start_including),
    startExcluding: keyOf(r.start_excluding),
    endIncluding: keyOf(r.end_including),
    endExcluding: keyOf(r.end_excluding),
  };
}

/** A range's bounds against a version, both split into keys. */
function inPrepared(v: VersionKey, r: PreparedRange): boolean {
  if (r.version !== undefined) return compareVersionKeys(v, r.version) === 0;
  if (r.startIncluding !== undefined && compareVersionKeys(v, r.startIncluding) < 0) return false;
  if (r.startExcluding !== undefined && compareVersionKeys(v, r.startExcluding) <= 0) return false;
  if (r.endIncluding !== undefined && compareVersionKeys(v, r.endIncluding) > 0) return false;
  if (r.endExcluding !== undefined && compareVersionKeys(v, r.endExcluding) >= 0) return false;
  return true;
}

const lookups = new WeakMap<VulnIndex, VulnLookup>();

/** The lookup of an index, built on its first use and kept while the index lives. */
export function vulnLookup(index: VulnIndex): VulnLookup {
  let lookup = lookups.get(index);
  if (lookup === undefined) {
    lookup = {
      index,
      products: new Map(Object.entries(index.products)),
      prepared: new Map(),
      keys: new Map(),
      memo: new Map(),
      debianMemo: new Map(),
      byId: null,
    };
    lookups.set(index, lookup);
  }
  return lookup;
}

/** The index's record of a CVE id, or undefined. */
export function cveRecord(lookup: VulnLookup, id: string): VulnIndexCve | undefined {
  if (lookup.byId === null) lookup.byId = new Map(lookup.index.cves.map((c) => [c.id.toUpperCase(), c]));
  return lookup.byId.get(id.toUpperCase());
}

/**
 * NVD's semantics: an exact version, else every bound given holds (none given: every version).
 * `version` as a banner gives it; it is put in the index's form first (orderedVersion).
 */
export function inVulnRange(version: string, r: VulnIndexRange): boolean {
  return inPrepared(releaseKey(orderedVersion(version)), prepare(new Map(), r));
}

/** The positions of the CVEs of one product at one version (in the index's form), each once, in order. */
function cvesAt(lookup: VulnLookup, product: string, version: string): readonly number[] {
  const key = `${product}\u0000${version}`;
  const known = lookup.memo.get(key);
  if (known !== undefined) return known;
  let ranges = lookup.prepared.get(product);
  if (ranges === undefined) {
    ranges = (lookup.products.get(product) ?? []).map((r) => prepare(lookup.keys, r));
    lookup.prepared.set(product, ranges);
  }
  const v = releaseKey(version);
  const positions = new Set<number>();
  for (const r of ranges) if (!positions.has(r.cve) && inPrepared(v, r)) positions.add(r.cve);
  const cves = [...positions].sort((a, b) => a - b);
  lookup.memo.set(key, cves);
  return cves;
}

/** The tracker's verdicts on a source package at one version, or why there are none. */
type PackageJudgement = (DebianJudgement & { package: string }) | { why: string };

/** The Debian tracker's verdicts on the package a service's CPEs stand for, at the version seen; null without a Debian revision. */
function debianOf(lookup: VulnLookup, products: readonly string[], observed: ObservedVersion): PackageJudgement | null {
  const revision = observed.debianRevision;
  if (revision === undefined) return null;
  // An index without the section (null, or absent from a hand-written one) has no tracker data.
  const debian = lookup.index.debian ?? null;
  if (debian === null) return { why: 'no Debian security tracker data was imported into the portal' };
  const name = products.map(debianPackageOf).find((p) => p !== null && Object.hasOwn(debian, p));
  if (name === undefined || name === null)
    return { why: 'the Debian security tracker lists no package for this product' };
  const key = `${name}\u0000${observed.upstream}\u0000${revision}`;
  let judged = lookup.debianMemo.get(key);
  if (judged === undefined) {
    const pkg = debianPackage(debian, name);
    const judgement =
      pkg === null
        ? { why: `the index's Debian entry for ${name} is damaged` }
        : judgeDebianPackage({ upstream: observed.upstream, revision }, pkg);
    judged = 'why' in judgement ? judgement : { package: name, ...judgement };
    lookup.debianMemo.set(key, judged);
  }
  return judged;
}

/** A range match without a Debian revision to judge: one shared basis, not one per match (a network has many). */
const RANGE_ONLY: VulnMatchBasis = Object.freeze({ kind: 'version_range', debianNote: null });

interface Where {
  product: string;
  cpe: string;
}

/** The CVEs an NVD range names for the service's CPEs at one version, the first CPE naming one winning, in that order. */
function rangeMatches(service: NmapService, lookup: VulnLookup, version: string) {
  const found = new Map<number, Where>();
  const keys: string[] = [];
  let first: Where | null = null;
  for (const cpe of service.cpes) {
    const own = cpeProductKey(cpe);
    if (own === null) continue;
    first ??= { product: own, cpe };
    for (const product of productKeysOf(own)) {
      keys.push(product);
      if (!lookup.products.has(product)) continue;
      for (const at of cvesAt(lookup, product, version)) if (!found.has(at)) found.set(at, { product, cpe });
    }
  }
  return { found, keys, first };
}

/**
 * Every CVE of the index the service falls under, each once: those an NVD range names for the
 * upstream version (the first CPE naming one wins, in the index's order per CPE) and, when the
 * banner names a Debian revision the tracker can judge, those the tracker lists unfixed in it
 * (then all in the index's order); a CVE the tracker lists fixed in that revision is left out.
 */
export function matchVulnIndex(service: NmapService, lookup: VulnLookup): VulnMatch[] {
  const observed = observedVersion(service);
  if (observed === undefined) return [];
  const { found, keys, first } = rangeMatches(service, lookup, orderedVersion(observed.upstream));
  const debian = debianOf(lookup, keys, observed);
  const out: VulnMatch[] = [];
  if (debian === null || 'why' in debian) {
    const basis: VulnMatchBasis = debian === null ? RANGE_ONLY : { kind: 'version_range', debianNote: debian.why };
    for (const [at, where] of found) {
      const cve = lookup.index.cves[at];
      if (cve !== undefined) out.push({ cve, product: where.product, cpe: where.cpe, observed, basis });
    }
    return out;
  }
  const positions = new Set(found.keys());
  for (const [at, v] of debian.verdicts) if (v.state === 'vulnerable' && !v.unimportant) positions.add(at);
  const unjudged: VulnMatchBasis = {
    kind: 'version_range',
    debianNote: `the Debian security tracker gives no verdict on it for ${debian.package} in ${debian.release}`,
  };
  for (const at of [...positions].sort((a, b) => a - b)) {
    const cve = lookup.index.cves[at];
    const where = found.get(at) ?? first;
    const verdict = debian.verdicts.get(at);
    if (cve === undefined || where === null || verdict?.state === 'fixed') continue;
    const basis: VulnMatchBasis =
      verdict?.state === 'vulnerable'
        ? {
            kind: 'distribution_package',
            distribution: 'debian',
            release: debian.release,
            package: debian.package,
            version: `${observed.upstream}-${observed.debianRevision}`,
            fixed: verdict.fixed,
            inRange: found.has(at),
            unimportant: verdict.unimportant,
          }
        : unjudged;
    out.push({ cve, product: where.product, cpe: where.cpe, observed, basis });
  }
  return out;
}
