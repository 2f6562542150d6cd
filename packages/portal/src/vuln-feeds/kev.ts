import type { Readable } from 'node:stream';
import { feedBytes, feedRefused, MAX_FEED_BYTES } from './input.ts';
import { jsonItems } from './json-stream.ts';
import { CVE_ID, summaryOf } from './nvd.ts';

/** What the index keeps of one catalogue entry. */
export interface KevEntry {
  cve_id: string;
  date_added: string;
  due_date: string | null;
  known_ransomware: boolean;
  /** The catalogue's description: the summary of a CVE the NVD files lack. */
  summary: string;
}

export interface KevCatalog {
  catalog_version: string | null;
  entries: KevEntry[];
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

function entryOf(item: unknown, label: string, position: number): KevEntry {
  const where = `vulnerabilities[${position}]`;
  if (typeof item !== 'object' || item === null) throw feedRefused(label, `${where} is not an object`);
  const e = item as Record<string, unknown>;
  const id = e['cveID'];
  if (typeof id !== 'string' || !CVE_ID.test(id))
    throw feedRefused(label, `${where}: cveID "${String(id).slice(0, 40)}" is not a CVE id`);
  const added = e['dateAdded'];
  if (typeof added !== 'string' || !DATE.test(added))
    throw feedRefused(label, `${where} (${id}): dateAdded must be YYYY-MM-DD`);
  const due = e['dueDate'];
  const description = [e['shortDescription'], e['vulnerabilityName']].find((v) => typeof v === 'string' && v !== '');
  return {
    cve_id: id,
    date_added: added,
    due_date: typeof due === 'string' && DATE.test(due) ? due : null,
    known_ransomware: e['knownRansomwareCampaignUse'] === 'Known',
    summary: summaryOf(typeof description === 'string' ? description : ''),
  };
}

/**
 * CISA's Known Exploited Vulnerabilities catalogue (`known_exploited_vulnerabilities.json`,
 * plain or gzip). The catalogue is small (about 1,500 entries) and replaces the previous one
 * whole, so it is returned at once; a CVE listed twice keeps its first entry.
 */
export async function readKevCatalog(source: Readable, label: string): Promise<KevCatalog> {
  const entries = new Map<string, KevEntry>();
  let catalogVersion: string | null = null;
  let sawList = false;
  let position = 0;
  const bytes = feedBytes(source, label, MAX_FEED_BYTES.kev);
  for await (const { path, value } of jsonItems(
    bytes,
    label,
    ['vulnerabilities.*', 'catalogVersion'],
    ['vulnerabilities'],
  )) {
    if (path === 'vulnerabilities.*') {
      const entry = entryOf(value, label, position++);
      if (!entries.has(entry.cve_id)) entries.set(entry.cve_id, entry);
    } else if (path === 'vulnerabilities') sawList = Array.isArray(value);
    else if (path === 'catalogVersion' && typeof value === 'string') catalogVersion = value;
  }
  if (!sawList) throw feedRefused(label, 'no "vulnerabilities" array: not the CISA KEV catalogue');
  return { catalog_version: catalogVersion, entries: [...entries.values()] };
}
