import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { type FeedSource, type ImportReport, importFeeds } from '@svc/portal/vuln-feeds/import';
import { severityOfCvss } from '@svc/protocol';
import type { TestPortal } from './portal.ts';

/**
 * Vulnerability feed files in the formats their publishers document, built from a few lines
 * of test data: NVD's CVE JSON 2.0 feed (`nvdcve-2.0-<year>.json`), CISA's Known Exploited
 * Vulnerabilities catalogue (`known_exploited_vulnerabilities.json`) and FIRST's EPSS CSV
 * (`epss_scores-<date>.csv`). docs/vuln-feeds.md says where the real ones are downloaded.
 */

/** One cpeMatch: a CPE 2.3 match string and the NVD version bounds. */
export interface NvdCpeSpec {
  criteria: string;
  /** False for a platform the CVE needs but that is not itself vulnerable; default true. */
  vulnerable?: boolean;
  startIncluding?: string;
  startExcluding?: string;
  endIncluding?: string;
  endExcluding?: string;
}

export type CvssVersion = '4.0' | '3.1' | '3.0' | '2.0';

export interface NvdCveSpec {
  id: string;
  /** Base score; none (null or absent) gives a record without metrics. */
  cvss?: number | null;
  /** Default 3.1. */
  cvssVersion?: CvssVersion;
  description?: string;
  /** One OR node of these cpeMatch entries. */
  cpes?: NvdCpeSpec[];
  /** Extra configurations as NVD writes "running on" ones: an AND of the cpes above and these platforms (vulnerable: false). */
  platforms?: string[];
  published?: string;
}

const METRIC_KEY: Record<CvssVersion, string> = {
  '4.0': 'cvssMetricV40',
  '3.1': 'cvssMetricV31',
  '3.0': 'cvssMetricV30',
  '2.0': 'cvssMetricV2',
};

/** NVD's baseSeverity: the protocol's bands in NVD's words (its "NONE" is our info). */
const band = (score: number) => {
  const severity = severityOfCvss(score);
  return severity === 'info' ? 'NONE' : severity.toUpperCase();
};

const uuidOf = (text: string) => {
  const h = createHash('sha256').update(text).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`.toUpperCase();
};

function metricsOf(cve: NvdCveSpec): Record<string, unknown> {
  if (cve.cvss === undefined || cve.cvss === null) return {};
  const version = cve.cvssVersion ?? '3.1';
  const score = cve.cvss;
  const vector =
    version === '2.0'
      ? 'AV:N/AC:L/Au:N/C:P/I:P/A:P'
      : version === '4.0'
        ? 'CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N'
        : `CVSS:${version}/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H`;
  const cvssData: Record<string, unknown> = { version, vectorString: vector, baseScore: score };
  if (version !== '2.0') cvssData['baseSeverity'] = band(score);
  const metric: Record<string, unknown> = { source: 'nvd@nist.gov', type: 'Primary', cvssData };
  if (version === '2.0') Object.assign(metric, { baseSeverity: band(score) === 'CRITICAL' ? 'HIGH' : band(score) });
  else if (version !== '4.0') Object.assign(metric, { exploitabilityScore: 3.9, impactScore: 5.9 });
  return { [METRIC_KEY[version]]: [metric] };
}

function cpeMatchOf(cpe: NvdCpeSpec): Record<string, unknown> {
  const match: Record<string, unknown> = { vulnerable: cpe.vulnerable ?? true, criteria: cpe.criteria };
  if (cpe.startIncluding !== undefined) match['versionStartIncluding'] = cpe.startIncluding;
  if (cpe.startExcluding !== undefined) match['versionStartExcluding'] = cpe.startExcluding;
  if (cpe.endIncluding !== undefined) match['versionEndIncluding'] = cpe.endIncluding;
  if (cpe.endExcluding !== undefined) match['versionEndExcluding'] = cpe.endExcluding;
  match['matchCriteriaId'] = uuidOf(JSON.stringify(match));
  return match;
}

function configurationsOf(cve: NvdCveSpec): unknown[] {
  const cpes = cve.cpes ?? [];
  if (cpes.length === 0) return [];
  const node = { operator: 'OR', negate: false, cpeMatch: cpes.map(cpeMatchOf) };
  if (cve.platforms === undefined || cve.platforms.length === 0) return [{ nodes: [node] }];
  const platforms = {
    operator: 'OR',
    negate: false,
    cpeMatch: cve.platforms.map((criteria) => cpeMatchOf({ criteria, vulnerable: false })),
  };
  return [{ operator: 'AND', nodes: [node, platforms] }];
}

function nvdItem(cve: NvdCveSpec, timestamp: string): unknown {
  return {
    cve: {
      id: cve.id,
      sourceIdentifier: 'cve@mitre.org',
      published: cve.published ?? '2024-01-15T10:15:00.000',
      lastModified: timestamp,
      vulnStatus: 'Analyzed',
      descriptions: [
        { lang: 'en', value: cve.description ?? `Description of ${cve.id}.` },
        { lang: 'es', value: `Descripción de ${cve.id}.` },
      ],
      metrics: metricsOf(cve),
      weaknesses: [],
      configurations: configurationsOf(cve),
      references: [{ url: `https://example.test/${cve.id}`, source: 'cve@mitre.org' }],
    },
  };
}

const TIMESTAMP = '2026-11-27T03:00:00.000';

/**
 * An NVD feed in pieces, one record at a time, for files too large to hold as one string
 * (`total` is the count the header states; NVD writes it before the records).
 */
export function* nvdFeedPieces(
  cves: Iterable<NvdCveSpec>,
  total: number,
  opts: { timestamp?: string } = {},
): Generator<string> {
  const timestamp = opts.timestamp ?? TIMESTAMP;
  const head = {
    resultsPerPage: total,
    startIndex: 0,
    totalResults: total,
    format: 'NVD_CVE',
    version: '2.0',
    timestamp,
  };
  yield `${JSON.stringify(head).slice(0, -1)},"vulnerabilities":[`;
  let first = true;
  for (const cve of cves) {
    yield `${first ? '' : ','}${JSON.stringify(nvdItem(cve, timestamp))}`;
    first = false;
  }
  yield ']}';
}

/** An NVD CVE JSON 2.0 feed file's text (the shape of the yearly and modified files). */
export function nvdFeed(cves: NvdCveSpec[], opts: { timestamp?: string } = {}): string {
  return [...nvdFeedPieces(cves, cves.length, opts)].join('');
}

export interface KevSpec {
  cve: string;
  /** YYYY-MM-DD. */
  dateAdded: string;
  dueDate?: string;
  /** knownRansomwareCampaignUse is "Known" (else "Unknown"). */
  ransomware?: boolean;
  vendor?: string;
  product?: string;
  name?: string;
  description?: string;
}

/** CISA's KEV catalogue file's text. */
export function kevCatalog(entries: KevSpec[], opts: { catalogVersion?: string; dateReleased?: string } = {}): string {
  return JSON.stringify({
    title: 'CISA Catalog of Known Exploited Vulnerabilities',
    catalogVersion: opts.catalogVersion ?? '2026.11.26',
    dateReleased: opts.dateReleased ?? '2026-11-26T17:00:00.0000Z',
    count: entries.length,
    vulnerabilities: entries.map((e) => ({
      cveID: e.cve,
      vendorProject: e.vendor ?? 'Vendor',
      product: e.product ?? 'Product',
      vulnerabilityName: e.name ?? `Vendor Product vulnerability (${e.cve})`,
      dateAdded: e.dateAdded,
      shortDescription: e.description ?? `Exploited vulnerability ${e.cve}.`,
      requiredAction: 'Apply mitigations per vendor instructions or discontinue use of the product.',
      dueDate: e.dueDate ?? e.dateAdded,
      knownRansomwareCampaignUse: e.ransomware ? 'Known' : 'Unknown',
      notes: `https://nvd.nist.gov/vuln/detail/${e.cve}`,
      cwes: [],
    })),
  });
}

export interface EpssSpec {
  cve: string;
  epss: number;
  percentile: number;
}

/** FIRST's EPSS CSV text: the model comment line, the header, one row per CVE. */
export function epssCsv(rows: EpssSpec[], opts: { modelVersion?: string; scoreDate?: string } = {}): string {
  const head = `#model_version:${opts.modelVersion ?? 'v2025.03.14'},score_date:${opts.scoreDate ?? '2026-11-26T12:55:00Z'}`;
  return `${[head, 'cve,epss,percentile', ...rows.map((r) => `${r.cve},${r.epss},${r.percentile}`)].join('\n')}\n`;
}

/** `bytes` as a stream of `size`-byte chunks: a reader must not depend on where a read ends. */
export function chunkedStream(bytes: Buffer | string, size: number): Readable {
  const b = Buffer.from(bytes);
  const parts: Buffer[] = [];
  for (let i = 0; i < b.length; i += size) parts.push(b.subarray(i, i + size));
  return Readable.from(parts);
}

/** Writes a feed's text to `dir/name`, gzip-compressed when the name ends in `.gz` (as the feeds are published); returns the path. */
export async function writeFeedFile(dir: string, name: string, text: string): Promise<string> {
  const file = path.join(dir, name);
  await fs.writeFile(file, name.endsWith('.gz') ? gzipSync(text) : text);
  return file;
}

export interface TestFeeds {
  /** NVD feed texts (nvdFeed), imported in order. */
  nvd?: string[];
  kev?: string;
  epss?: string;
  /** The Debian security tracker's JSON. */
  debian?: string;
}

/**
 * Imports feed texts into a test portal's database as `npm run feeds:import` does (the same
 * import and index build), without files or a child process; returns what was imported and the
 * index version.
 */
export function importTestFeeds(
  portal: TestPortal,
  feeds: TestFeeds,
  now: () => Date = () => new Date(),
): Promise<ImportReport> {
  const source = (label: string, text: string): FeedSource => ({
    label,
    open: () => Readable.from([Buffer.from(text)]),
  });
  return importFeeds(
    portal.ctx.pool,
    {
      ...(feeds.nvd ? { nvd: feeds.nvd.map((text, i) => source(`nvd-${i}.json`, text)) } : {}),
      ...(feeds.kev !== undefined ? { kev: source('kev.json', feeds.kev) } : {}),
      ...(feeds.epss !== undefined ? { epss: source('epss.csv', feeds.epss) } : {}),
      ...(feeds.debian !== undefined ? { debian: source('debian.json', feeds.debian) } : {}),
    },
    now,
  );
}

/** The real feed files under test-support/fixtures/vuln-feeds/ (SOURCES.md says where each comes from). */
export const FEED_FIXTURES = path.join(import.meta.dirname, 'fixtures', 'vuln-feeds');

/** A fixture file's text: `nvd/CVE-1999-0236.json`, `debian/vunnel-debian.json`. */
export const feedFixture = (name: string): Promise<string> => fs.readFile(path.join(FEED_FIXTURES, name), 'utf8');

/**
 * An NVD feed (the API's and the yearly files' shape) around real NVD records, each record's
 * text kept byte for byte as the `cve` of its item.
 */
export function nvdFeedOf(records: readonly string[], opts: { timestamp?: string } = {}): string {
  const head = {
    resultsPerPage: records.length,
    startIndex: 0,
    totalResults: records.length,
    format: 'NVD_CVE',
    version: '2.0',
    timestamp: opts.timestamp ?? TIMESTAMP,
  };
  return `${JSON.stringify(head).slice(0, -1)},"vulnerabilities":[${records.map((r) => `{"cve":${r}}`).join(',')}]}`;
}

/** The real NVD records of nvd/ by CVE id, as one feed. */
export async function nvdFixtureFeed(ids: readonly string[]): Promise<string> {
  return nvdFeedOf(await Promise.all(ids.map((id) => feedFixture(`nvd/${id}.json`))));
}
