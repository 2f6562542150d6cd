import { lenient, type VulnIndex, type VulnIndexCve } from '@svc/protocol';
import { cveRecord, vulnLookup } from '../cve-match/vuln-index-match.ts';
import type { ScanFinding } from './types.ts';

/**
 * Prioritisation from the vulnerability index (docs/vuln-matching.md): every finding naming a CVE
 * the index knows (from the feed, the hand table, another scanner) gets `kev`, `kev_date_added`,
 * `epss` and `epss_percentile`, and `cvss` when it has none (a score the finding's source gave
 * is kept). Over several CVEs: known exploited when any is, the earliest catalogue date, the
 * highest EPSS and percentile, the highest CVSS. Pure; findings naming no known CVE are unchanged.
 */

export interface Prioritisation {
  cvss?: number;
  kev?: boolean;
  kev_date_added?: string;
  epss?: number;
  epss_percentile?: number;
}

const max = (values: readonly (number | null)[]): number | undefined => {
  const known = values.filter((v) => v !== null);
  return known.length === 0 ? undefined : Math.max(...known);
};

/** The fields the index gives a finding naming these CVEs. */
export function prioritisationOf(cves: readonly VulnIndexCve[]): Prioritisation {
  const kevDates = cves.flatMap((c) => (c.kev === null ? [] : [c.kev.date_added])).sort();
  const cvss = max(cves.map((c) => c.cvss));
  const epss = max(cves.map((c) => c.epss));
  const percentile = max(cves.map((c) => c.epss_percentile));
  return {
    ...(cvss === undefined ? {} : { cvss }),
    kev: kevDates.length > 0,
    ...(kevDates[0] === undefined ? {} : { kev_date_added: kevDates[0] }),
    ...(epss === undefined ? {} : { epss }),
    ...(percentile === undefined ? {} : { epss_percentile: percentile }),
  };
}

/** The CVE ids a finding names: `references.cve` and the older single `cve`. */
export function findingCves(f: ScanFinding): string[] {
  const ids = [...(f.references?.cve ?? []), ...(lenient.str(f.cve) === null ? [] : [lenient.str(f.cve)!])];
  return [...new Set(ids.map((id) => id.trim().toUpperCase()))];
}

export function enrichFindings<F extends ScanFinding>(
  findings: readonly F[],
  index: VulnIndex | null | undefined,
): F[] {
  if (index === null || index === undefined) return [...findings];
  const lookup = vulnLookup(index);
  return findings.map((f) => {
    const cves = findingCves(f).flatMap((id) => cveRecord(lookup, id) ?? []);
    if (cves.length === 0) return f;
    const { cvss, ...rest } = prioritisationOf(cves);
    return { ...f, ...(typeof f.cvss === 'number' || cvss === undefined ? {} : { cvss }), ...rest };
  });
}
