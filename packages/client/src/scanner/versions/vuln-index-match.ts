import { productKeysOf } from './cpe-aliases.ts';
import { cpeProductKey, type VulnIndex, type VulnIndexCve, type VulnIndexRange } from '@svc/protocol';
import type { NmapService } from '../parse/types.ts';
import { compareVersionKeys, type VersionKey, versionKey } from './compare.ts';
import { observedVersion, type ObservedVersion } from './match.ts';

/**
 * Services against the vulnerability index (docs/vuln-matching.md). A service matches a CVE when
 * one of its CPEs names a product of the index (`part:vendor:product`) and the version nmap
 * reported falls in one of that product's ranges, with NVD's bounds. A product name without a
 * CPE matches nothing: the index is keyed by vendor and product, and guessing the vendor from a
 * banner would pair unrelated products. A service without a comparable version matches nothing.
 */

export interface VulnMatch {
  cve: VulnIndexCve;
  /** The product key of the service's CPE that matched. */
  product: string;
  /** The CPE that matched, as nmap wrote it. */
  cpe: string;
  observed: ObservedVersion;
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
  memo: Map<string, readonly VulnIndexCve[]>;
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
      key = versionKey(v);
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

/** NVD's semantics: an exact version, else every bound given holds (none given: every version). */
export function inVulnRange(version: string, r: VulnIndexRange): boolean {
  return inPrepared(versionKey(version), prepare(new Map(), r));
}

/** The CVEs of one product at one version, each once, in the index's order. */
function cvesAt(lookup: VulnLookup, product: string, version: string): readonly VulnIndexCve[] {
  const key = `${product}\u0000${version}`;
  const known = lookup.memo.get(key);
  if (known !== undefined) return known;
  let ranges = lookup.prepared.get(product);
  if (ranges === undefined) {
    ranges = (lookup.products.get(product) ?? []).map((r) => prepare(lookup.keys, r));
    lookup.prepared.set(product, ranges);
  }
  const v = versionKey(version);
  const positions = new Set<number>();
  for (const r of ranges) if (!positions.has(r.cve) && inPrepared(v, r)) positions.add(r.cve);
  const cves = [...positions]
    .sort((a, b) => a - b)
    .map((i) => lookup.index.cves[i])
    .filter((c) => c !== undefined);
  lookup.memo.set(key, cves);
  return cves;
}

/** Every CVE of the index the service falls under, each once (the first CPE naming it wins). */
export function matchVulnIndex(service: NmapService, lookup: VulnLookup): VulnMatch[] {
  const observed = observedVersion(service);
  if (observed === undefined) return [];
  const seen = new Set<string>();
  const out: VulnMatch[] = [];
  for (const cpe of service.cpes) {
    const own = cpeProductKey(cpe);
    if (own === null) continue;
    for (const product of productKeysOf(own)) {
      if (!lookup.products.has(product)) continue;
      for (const cve of cvesAt(lookup, product, observed.upstream)) {
        if (seen.has(cve.id)) continue;
        seen.add(cve.id);
        out.push({ cve, product, cpe, observed });
      }
    }
  }
  return out;
}
