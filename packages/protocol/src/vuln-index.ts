import type { Severity } from './sessions.ts';

/**
 * The vulnerability index: what the portal builds from the feeds an operator imports (NVD CVE
 * records in the JSON 2.0 format, CISA's Known Exploited Vulnerabilities catalogue, FIRST's EPSS
 * scores) and serves to `svc` and `svcd` at VULN_INDEX_PATH. Each CVE is written once; products
 * point at CVEs by position, so a quarter of a million records load and match within the
 * client's memory bound. docs/vuln-feeds.md describes the feeds, the import and the matching.
 */

/** Bumped when the shape changes; a client refuses an index of a format it does not know. */
export const VULN_INDEX_FORMAT = 1;

/** Where scanners and agents fetch the index with their key (conditional GET on `version`). */
export const VULN_INDEX_PATH = '/api/vuln-index';

/** A CVE in CISA's catalogue: exploited in the wild. */
export interface VulnIndexKev {
  /** `dateAdded` of the catalogue, YYYY-MM-DD. */
  date_added: string;
  /** `dueDate`, YYYY-MM-DD, or null when absent. */
  due_date: string | null;
  /** `knownRansomwareCampaignUse` is "Known". */
  known_ransomware: boolean;
}

export interface VulnIndexCve {
  /** CVE-YYYY-NNNN. */
  id: string;
  /** Base score of the newest CVSS version NVD gives (4.0, 3.1, 3.0, then 2.0), null when none. */
  cvss: number | null;
  /** That version ("3.1"), null when no score. */
  cvss_version: string | null;
  /** The severity the score falls in (the CVSS v3 bands), null when no score. */
  severity: Severity | null;
  /** The first English description, cut to VULN_SUMMARY_MAX characters. */
  summary: string;
  kev: VulnIndexKev | null;
  /** EPSS probability of exploitation in the next 30 days (0..1), null when the CSV lacks it. */
  epss: number | null;
  epss_percentile: number | null;
}

export const VULN_SUMMARY_MAX = 280;

/**
 * One vulnerable version range of a product, from one `cpeMatch` with `vulnerable: true`. A CPE
 * naming a version gives `version`; otherwise the four NVD bounds (any may be absent; none at all
 * means every version).
 */
export interface VulnIndexRange {
  /** Position of the CVE in `cves`. */
  cve: number;
  version?: string;
  start_including?: string;
  start_excluding?: string;
  end_including?: string;
  end_excluding?: string;
}

export interface VulnIndexSources {
  nvd: { records: number; imported_at: string } | null;
  kev: { records: number; catalog_version: string | null; imported_at: string } | null;
  epss: { records: number; score_date: string | null; imported_at: string } | null;
}

export interface VulnIndex {
  format: typeof VULN_INDEX_FORMAT;
  /** Content hash (hex); the ETag the index is served with. */
  version: string;
  generated_at: string;
  sources: VulnIndexSources;
  /** Every CVE a product range names or the KEV catalogue lists. */
  cves: VulnIndexCve[];
  /** `part:vendor:product` (cpeProductKey) → its vulnerable ranges. */
  products: Record<string, VulnIndexRange[]>;
}

const CPE23 = /^cpe:2\.3:([aoh]):([^:]*):([^:]*):([^:]*):([^:]*)/;
const CPE22 = /^cpe:\/([aoh]):([^:]*):([^:]*)(?::([^:]*))?(?::([^:]*))?/;

/** CPE fields: `*` and `-` (any, not applicable) and the empty field say nothing. */
const known = (field: string | undefined): string | undefined =>
  field === undefined || field === '' || field === '*' || field === '-' ? undefined : field.toLowerCase();

/** `part:vendor:product` of a CPE 2.3 name (NVD) or a CPE 2.2 URI (nmap), lower case; null when neither. */
export function cpeProductKey(cpe: string): string | null {
  const m = CPE23.exec(cpe) ?? CPE22.exec(cpe);
  if (m === null) return null;
  const vendor = known(m[2]);
  const product = known(m[3]);
  return vendor === undefined || product === undefined ? null : `${m[1]}:${vendor}:${product}`;
}

/**
 * The version a CPE names, or null. A version-like update joins it the way the product writes
 * its own versions (NVD's `openssh:9.2:p1` is OpenSSH `9.2p1`); other updates (beta, rc1) stay apart.
 */
export function cpeVersion(cpe: string): string | null {
  const m = CPE23.exec(cpe) ?? CPE22.exec(cpe);
  const version = known(m?.[4]);
  if (version === undefined) return null;
  const update = known(m?.[5]);
  return update !== undefined && /^p\d+$/.test(update) ? `${version}${update}` : version;
}
