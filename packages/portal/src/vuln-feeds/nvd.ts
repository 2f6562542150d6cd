import type { Readable } from 'node:stream';
import { cpeProductKey, cpeVersionField, orderedVersion, VULN_SUMMARY_MAX } from '@svc/protocol';
import { feedBytes, feedRefused, MAX_FEED_BYTES } from './input.ts';
import { jsonItems } from './json-stream.ts';

/** One vulnerable range of a product, as stored (VulnIndexRange with the product instead of a position). */
export interface NvdRange {
  product: string;
  version: string | null;
  start_including: string | null;
  start_excluding: string | null;
  end_including: string | null;
  end_excluding: string | null;
}

/** What the index keeps of one NVD CVE record. */
export interface NvdRecord {
  id: string;
  cvss: number | null;
  cvss_version: string | null;
  summary: string;
  ranges: NvdRange[];
}

export const CVE_ID = /^CVE-\d{4}-\d{4,}$/;

/** The newest CVSS version first: the base score the index carries. */
const METRICS = [
  ['cvssMetricV40', '4.0'],
  ['cvssMetricV31', '3.1'],
  ['cvssMetricV30', '3.0'],
  ['cvssMetricV2', '2.0'],
] as const;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
/** A range bound as the index orders versions (`2.10.0-rc1` is `2.10.0~rc1`). */
const bound = (v: unknown): string | null => {
  const t = text(v);
  return t === null ? null : orderedVersion(t);
};

/** Cut to the index's summary length, marking the cut. */
export function summaryOf(description: string): string {
  const flat = description.replace(/\s+/g, ' ').trim();
  return flat.length <= VULN_SUMMARY_MAX ? flat : `${flat.slice(0, VULN_SUMMARY_MAX - 1)}…`;
}

/** The primary source's score of the newest version NVD gives (a secondary one when no primary). */
function scoreOf(metrics: unknown): { cvss: number | null; cvss_version: string | null } {
  if (!isObj(metrics)) return { cvss: null, cvss_version: null };
  for (const [key, version] of METRICS) {
    const entries = list(metrics[key]).filter(isObj);
    const chosen = entries.find((m) => m['type'] === 'Primary') ?? entries[0];
    const score = isObj(chosen) && isObj(chosen['cvssData']) ? chosen['cvssData']['baseScore'] : undefined;
    if (typeof score === 'number' && score >= 0 && score <= 10) return { cvss: score, cvss_version: version };
  }
  return { cvss: null, cvss_version: null };
}

/**
 * Every `vulnerable: true` cpeMatch of the record's configurations (negated nodes say what is NOT
 * affected), as NISTIR 7696 reads a CPE's version: `*` is any version, narrowed by the match's
 * bounds; `-` is "not applicable", which no version value matches, so it is no range (the CVE
 * still reaches the index, for enrichment); a named version is that version with its update
 * (`2.10:rc1` is `2.10~rc1`, `9.3:p1` is `9.3p1`, see packages/protocol/src/vuln-version.ts).
 */
function rangesOf(configurations: unknown): NvdRange[] {
  const seen = new Map<string, NvdRange>();
  for (const configuration of list(configurations).filter(isObj))
    for (const node of list(configuration['nodes']).filter(isObj)) {
      if (node['negate'] === true) continue;
      for (const match of list(node['cpeMatch']).filter(isObj)) {
        if (match['vulnerable'] !== true || typeof match['criteria'] !== 'string') continue;
        const product = cpeProductKey(match['criteria']);
        const field = cpeVersionField(match['criteria']);
        if (product === null || field === null || field.kind === 'not_applicable') continue;
        const version = field.kind === 'value' ? field.version : null;
        const range: NvdRange = {
          product,
          version,
          start_including: version === null ? bound(match['versionStartIncluding']) : null,
          start_excluding: version === null ? bound(match['versionStartExcluding']) : null,
          end_including: version === null ? bound(match['versionEndIncluding']) : null,
          end_excluding: version === null ? bound(match['versionEndExcluding']) : null,
        };
        seen.set(JSON.stringify(range), range);
      }
    }
  return [...seen.values()];
}

function recordOf(item: unknown, label: string, position: number): NvdRecord {
  const cve = isObj(item) ? item['cve'] : undefined;
  if (!isObj(cve)) throw feedRefused(label, `vulnerabilities[${position}] has no "cve" object`);
  const id = cve['id'];
  if (typeof id !== 'string' || !CVE_ID.test(id))
    throw feedRefused(label, `vulnerabilities[${position}]: "${String(id).slice(0, 40)}" is not a CVE id`);
  const descriptions = list(cve['descriptions']).filter(isObj);
  const english = descriptions.find((d) => d['lang'] === 'en') ?? descriptions[0];
  return {
    id,
    ...scoreOf(cve['metrics']),
    summary: summaryOf(typeof english?.['value'] === 'string' ? english['value'] : ''),
    ranges: rangesOf(cve['configurations']),
  };
}

/**
 * The CVE records of one NVD feed file (a yearly `nvdcve-2.0-<year>.json[.gz]`, the modified or
 * recent file, or an API answer saved to a file: the same `{"vulnerabilities":[{"cve":…}]}`), one
 * at a time. The retired 1.1 format and anything else are refused.
 */
export async function* nvdRecords(source: Readable, label: string): AsyncGenerator<NvdRecord> {
  let position = 0;
  let sawList = false;
  const bytes = feedBytes(source, label, MAX_FEED_BYTES.nvd);
  for await (const { path, value } of jsonItems(
    bytes,
    label,
    ['vulnerabilities.*', 'format', 'CVE_data_version'],
    ['vulnerabilities'],
  )) {
    if (path === 'vulnerabilities.*') yield recordOf(value, label, position++);
    else if (path === 'vulnerabilities') sawList = Array.isArray(value);
    else if (path === 'CVE_data_version')
      throw feedRefused(label, 'this is the retired NVD 1.1 format; download the JSON 2.0 feeds (docs/vuln-feeds.md)');
    else if (path === 'format' && value !== 'NVD_CVE')
      throw feedRefused(label, `"format" is ${JSON.stringify(value)}, not "NVD_CVE"`);
  }
  if (!sawList) throw feedRefused(label, 'no "vulnerabilities" array: not an NVD CVE JSON 2.0 feed');
}
