import type { Severity } from './sessions.ts';
import { cpeFields } from './vuln-version.ts';

/**
 * The vulnerability index: what the portal builds from the feeds an operator imports (NVD CVE
 * records in the JSON 2.0 format, CISA's Known Exploited Vulnerabilities catalogue, FIRST's EPSS
 * scores) and serves to `svc` and `svcd` at VULN_INDEX_PATH. Each CVE is written once; products
 * point at CVEs by position, so a quarter of a million records load and match within the
 * client's memory bound. docs/vuln-feeds.md describes the feeds, the import and the matching.
 */

/**
 * Bumped when the shape or the meaning changes; a client refuses an index of a format it does
 * not know. 2: versions carry their update (`2.10~rc1`, see vuln-version.ts), a CPE
 * version `-` is no range, `cves` holds every CVE the feeds know, and `debian` the Debian
 * security tracker's fixed versions.
 */
export const VULN_INDEX_FORMAT = 2;

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
 * naming a version gives `version`; a CPE version `*` the four NVD bounds (any may be absent; none
 * at all means every version); a CPE version `-` (not applicable) no range. Every version is
 * written as orderedVersion writes it.
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
  /** The Debian security tracker's JSON (https://security-tracker.debian.org/tracker/data/json). */
  debian: { records: number; imported_at: string } | null;
}

/**
 * What the Debian security tracker says of one CVE in one source package, per release
 * (`bookworm`, `bullseye`, `sid`...): the version that fixed it (`"0"`: no version of the
 * release was ever affected, as the tracker writes it), or null while it is open (no fix yet).
 * Releases the tracker has not decided on (undetermined) are not listed.
 */
export interface VulnIndexDebianCve {
  /** Position of the CVE in `cves`. */
  cve: number;
  fixed: Record<string, string | null>;
  /** Releases where the tracker rates it unimportant (no fix planned: not a security problem there). */
  unimportant?: string[];
}

export interface VulnIndexDebianPackage {
  /** Per release, the versions its repositories hold now (`bookworm` and `bookworm-security` both under bookworm). */
  releases: Record<string, string[]>;
  cves: VulnIndexDebianCve[];
}

/** Source package name (`openssh`) → what the tracker says of it (a flat map: a client reads it a package at a time). */
export type VulnIndexDebian = Record<string, VulnIndexDebianPackage>;

export interface VulnIndex {
  format: typeof VULN_INDEX_FORMAT;
  /** Content hash (hex); the ETag the index is served with. */
  version: string;
  generated_at: string;
  sources: VulnIndexSources;
  /** Every CVE a feed knows (NVD, KEV, EPSS, the Debian tracker), matched by a range or not, ordered by id. */
  cves: VulnIndexCve[];
  /** `part:vendor:product` (cpeProductKey) → its vulnerable ranges. */
  products: Record<string, VulnIndexRange[]>;
  /** The Debian security tracker's fixed versions; null when it was never imported. */
  debian: VulnIndexDebian | null;
}

/** A vendor or product field: `*`, `-` and the empty field name none. */
const named = (field: string | undefined): string | undefined =>
  field === undefined || field === '' || field === '*' || field === '-' ? undefined : field.toLowerCase();

/** `part:vendor:product` of a CPE 2.3 name (NVD) or a CPE 2.2 URI (nmap), lower case; null when neither. */
export function cpeProductKey(cpe: string): string | null {
  const fields = cpeFields(cpe);
  if (fields === null) return null;
  const vendor = named(fields[1]);
  const product = named(fields[2]);
  return vendor === undefined || product === undefined ? null : `${fields[0]}:${vendor}:${product}`;
}
