import type { ScanFinding } from '../pipeline/types.ts';
import {
  categoryOf,
  cveList,
  cweList,
  given,
  ImportBook,
  type ImportedScan,
  importedScan,
  referencesOf,
  type Severity,
  TimeSpan,
} from './common.ts';
import { ImportError } from './guard.ts';
import { readJsonRecords } from './json-records.ts';
import { type Place, PlaceBook, placeOf } from './nuclei-place.ts';
import { type ImportTarget, targetHosts } from './targets.ts';

/**
 * Nuclei's output: JSON lines (`nuclei -jsonl -o file`), the JSON array of `-json-export`, or an
 * empty file (a run without results). Each result has `template-id`, `info` (name, severity,
 * description, remediation, reference, tags, classification: cve-id, cwe-id, cvss-score),
 * `type`, `host`, `url`, `ip`, `port`, `matched-at`, `matcher-name`, `extracted-results` and
 * `timestamp`. docs/cli/import.md has the mapping.
 */

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
/** Nuclei writes a list or one comma-separated string for several fields. */
const list = (v: unknown): string[] =>
  Array.isArray(v)
    ? v.filter((x): x is string => typeof x === 'string')
    : typeof v === 'string'
      ? v.split(',').map((s) => s.trim())
      : [];

const SEVERITIES: readonly Severity[] = ['critical', 'high', 'medium', 'low', 'info'];

/** A CVE id a template id names: `CVE-2021-44228`, `cve-2021-44228-log4j-rce`. */
export function cveOfTemplate(template: string): string[] {
  const m = /(?:^|[^a-z0-9])(cve-\d{4}-\d{4,})(?![0-9])/i.exec(template);
  return m === null ? [] : [m[1]!.toUpperCase()];
}

function resultFinding(r: Json, place: Place): ScanFinding {
  const template = str(r['template-id']) ?? str(r['templateID']);
  if (template === undefined) throw new ImportError('Not a Nuclei result: no template-id');
  const info = obj(r['info']);
  const cls = obj(info['classification']);
  const sev = (str(info['severity']) ?? 'info').toLowerCase();
  const type = str(r['type']) ?? '';
  const evidence = [
    str(r['matched-at']) ?? str(r['url'])?.replace(/^\/+/, ''),
    str(r['matcher-name']) === undefined ? undefined : `matcher ${str(r['matcher-name'])}`,
    ...list(r['extracted-results']).slice(0, 20),
  ].filter((x) => x !== undefined);
  const cvss = Number(cls['cvss-score']);
  const tags = list(info['tags']);
  const name = str(info['name']) ?? template;
  return {
    rule_id: `nuclei:${template}`,
    title: name,
    severity: SEVERITIES.find((s) => s === sev) ?? 'info',
    host: place.ip ?? place.hostname ?? '',
    ...given('hostname', place.ip === undefined ? undefined : place.hostname),
    ...given('port', place.port),
    ...given('protocol', place.port === undefined ? undefined : type === 'dns' ? 'udp' : 'tcp'),
    ...given('service', type === 'http' ? place.scheme : undefined),
    ...given('evidence', evidence.join('\n')),
    ...given('description', str(info['description'])),
    ...given('remediation', str(info['remediation'])),
    ...referencesOf(
      cveList([...list(cls['cve-id']), ...cveOfTemplate(template)]),
      cweList(list(cls['cwe-id'])),
      list(info['reference']).filter((u) => /^https?:\/\//.test(u)),
    ),
    ...given('cvss', Number.isFinite(cvss) && cvss > 0 && cvss <= 10 ? cvss : undefined),
    ...given('category', tags.includes('default-login') ? 'default_credentials' : categoryOf(name, tags.join(' '))),
  };
}

/**
 * Every result becomes a finding, wherever Nuclei put its place (nuclei-place.ts); a file
 * without results is a clean run of `targets`, which the import covers (targets.ts).
 */
export async function parseNuclei(
  file: string,
  maxBytes: number,
  targets: readonly ImportTarget[] = [],
): Promise<ImportedScan> {
  const book = new ImportBook();
  const places = new PlaceBook(book);
  const span = new TimeSpan();
  const read = await readJsonRecords(file, maxBytes, (r, where) => {
    let f: ScanFinding;
    const place = placeOf(r);
    try {
      f = resultFinding(r, place);
    } catch (err) {
      if (err instanceof ImportError) throw new ImportError(`${err.message} (${where})`);
      throw err;
    }
    const t = Date.parse(str(r['timestamp']) ?? '');
    if (!Number.isNaN(t)) span.add(new Date(t));
    places.add(f, place);
  });
  if (read.records === 0 && targets.length === 0)
    throw new ImportError(
      `${file} holds no Nuclei result: a run without results writes an empty file; name what it scanned with --targets (URLs, host:port or hosts) to import it as a clean run`,
      'usage',
    );
  places.finish(targetHosts(targets));
  return {
    ...importedScan('nuclei', { book, records: read.records, span }),
    variant: read.records === 0 ? 'empty' : read.shape === 'array' ? 'JSON array' : 'JSON lines',
  };
}
