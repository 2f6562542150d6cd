import { cpeVersion } from '@svc/protocol';
import type { NmapService } from '../parse/types.ts';
import { compareVersions, splitDebianVersion } from './compare.ts';
import { KNOWN_VULNERABLE, type KnownVulnerable } from './known-vulnerable.ts';

/** A version nmap reported, split into the upstream version and a Debian revision when the banner has one. */
export interface ObservedVersion {
  upstream: string;
  debianRevision?: string | undefined;
}

/**
 * Upstream versions compare only when they look like one (`9.2p1`, `7.0.15`, `2.10.0-rc1`,
 * `1.0~beta2` as a CPE's update gives it); `3.X - 4.X` does not.
 */
const VERSION = /^\d+(\.\d+)+(?:[a-z]*\d*|[-_.~]?(?:alpha|beta|rc|pre|preview|dev|snapshot)[-_.]?\d*)$/i;

export function observedVersion(service: NmapService): ObservedVersion | undefined {
  // "9.6.0 or later" and "3.X - 4.X" are guesses, not versions.
  if (/ or later| - /i.test(service.version ?? '')) return undefined;
  const fromBanner = service.version?.split(/\s+/)[0];
  const fromCpe = service.cpes.map((c) => cpeVersion(c) ?? undefined).find((v) => v !== undefined && VERSION.test(v));
  const upstream = fromBanner !== undefined && VERSION.test(fromBanner) ? fromBanner : fromCpe;
  if (upstream === undefined) return undefined;
  const debian = /\bDebian\s+(\S+)/.exec(service.version ?? '')?.[1];
  return { upstream, ...(debian === undefined ? {} : { debianRevision: debian }) };
}

function sameProduct(service: NmapService, entry: KnownVulnerable): boolean {
  const byCpe = service.cpes.some((c) => entry.cpes.some((p) => c === p || c.startsWith(`${p}:`)));
  const product = service.product?.toLowerCase();
  return byCpe || (product !== undefined && entry.products.some((p) => p.toLowerCase() === product));
}

function inRange(version: string, entry: KnownVulnerable): boolean {
  return entry.affected.some(
    (r) => (r.from === undefined || compareVersions(version, r.from) >= 0) && compareVersions(version, r.below) < 0,
  );
}

/** True when the banner's Debian revision is at or past the Debian fix for this upstream version. */
function fixedByDebian(observed: ObservedVersion, entry: KnownVulnerable): boolean {
  const fixed = entry.debianFixed?.[observed.upstream];
  if (fixed === undefined || observed.debianRevision === undefined) return false;
  return compareVersions(observed.debianRevision, splitDebianVersion(fixed).revision) >= 0;
}

export interface VersionMatch {
  entry: KnownVulnerable;
  observed: ObservedVersion;
}

/** The table entries a detected service falls under. */
export function matchKnownVulnerable(
  service: NmapService,
  table: readonly KnownVulnerable[] = KNOWN_VULNERABLE,
): VersionMatch[] {
  const observed = observedVersion(service);
  if (observed === undefined) return [];
  return table
    .filter((e) => sameProduct(service, e) && inRange(observed.upstream, e) && !fixedByDebian(observed, e))
    .map((entry) => ({ entry, observed }));
}
