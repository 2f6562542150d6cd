import type { ScanFinding } from '../pipeline/types.ts';
import {
  categoryOf,
  cveList,
  cweList,
  given,
  ImportBook,
  type ImportedScan,
  isAddress,
  importedScan,
  referencesOf,
  type Severity,
  TimeSpan,
  validPort,
} from './common.ts';
import { ImportError, MAX_LINE_BYTES, MAX_LINE_VALUES, readChunks } from './guard.ts';

/**
 * Nuclei's JSON lines (`nuclei -jsonl -o file`): one result a line, with `template-id`, `info`
 * (name, severity, description, remediation, reference, tags, classification: cve-id, cwe-id,
 * cvss-score), `type`, `host`, `ip`, `port`, `matched-at`, `matcher-name`, `extracted-results`
 * and `timestamp`. docs/cli/import.md has the mapping.
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
const DEFAULT_PORTS: Readonly<Record<string, number>> = { http: 80, https: 443 };

/** Where the match was: address, name and port from `ip`, `port`, `host` or `matched-at`. */
function placeOf(r: Json): { ip?: string; hostname?: string; port?: number; scheme?: string } {
  const raw = str(r['matched-at']) ?? str(r['host']) ?? '';
  let hostname: string | undefined;
  let port: number | undefined;
  let scheme: string | undefined;
  try {
    const u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `tcp://${raw}`);
    hostname = u.hostname.replace(/^\[|\]$/g, '') || undefined;
    scheme = u.protocol.replace(/:$/, '');
    port = u.port === '' ? DEFAULT_PORTS[scheme] : Number(u.port) || undefined;
  } catch {
    hostname = undefined;
  }
  port = validPort(Number(str(r['port']) ?? (typeof r['port'] === 'number' ? String(r['port']) : ''))) ?? port;
  const ip = str(r['ip']) ?? (hostname !== undefined && isAddress(hostname) ? hostname : undefined);
  return {
    ...(ip === undefined ? {} : { ip }),
    ...(hostname === undefined || hostname === ip ? {} : { hostname }),
    ...(port === undefined ? {} : { port }),
    ...(scheme === undefined ? {} : { scheme }),
  };
}

function lineFinding(r: Json): ScanFinding | null {
  const template = str(r['template-id']) ?? str(r['templateID']);
  if (template === undefined) throw new ImportError('Not a Nuclei JSON line: no template-id');
  const info = obj(r['info']);
  const cls = obj(info['classification']);
  const place = placeOf(r);
  const host = place.ip ?? place.hostname;
  if (host === undefined) return null;
  const sev = (str(info['severity']) ?? 'info').toLowerCase();
  const type = str(r['type']) ?? '';
  const evidence = [
    str(r['matched-at']),
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
    host,
    ...given('hostname', place.ip === undefined ? undefined : place.hostname),
    ...given('port', place.port),
    ...given('protocol', place.port === undefined ? undefined : type === 'dns' ? 'udp' : 'tcp'),
    ...given('service', type === 'http' ? place.scheme : undefined),
    ...given('evidence', evidence.join('\n')),
    ...given('description', str(info['description'])),
    ...given('remediation', str(info['remediation'])),
    ...referencesOf(
      cveList(list(cls['cve-id'])),
      cweList(list(cls['cwe-id'])),
      list(info['reference']).filter((u) => /^https?:\/\//.test(u)),
    ),
    ...given('cvss', Number.isFinite(cvss) && cvss > 0 && cvss <= 10 ? cvss : undefined),
    ...given('category', tags.includes('default-login') ? 'default_credentials' : categoryOf(name, tags.join(' '))),
  };
}

export async function parseNuclei(file: string, maxBytes: number): Promise<ImportedScan> {
  const book = new ImportBook();
  const span = new TimeSpan();
  let records = 0;
  let lineNo = 0;
  const take = (line: string) => {
    lineNo += 1;
    if (line.trim() === '') return;
    if (tooManyValues(line))
      throw new ImportError(
        `Refused: line ${lineNo} holds more than ${MAX_LINE_VALUES} JSON values (not a Nuclei result)`,
      );
    let r: unknown;
    try {
      r = JSON.parse(line);
    } catch {
      throw new ImportError(`Not Nuclei JSON lines: line ${lineNo} is not JSON (a truncated or other file)`);
    }
    if (typeof r !== 'object' || r === null || Array.isArray(r))
      throw new ImportError(
        `Not Nuclei JSON lines: line ${lineNo} is not a JSON object (nuclei -jsonl writes one a line)`,
      );
    records += 1;
    let f: ScanFinding | null;
    try {
      f = lineFinding(r as Json);
    } catch (err) {
      if (err instanceof ImportError) throw new ImportError(`${err.message} (line ${lineNo})`);
      throw err;
    }
    const t = Date.parse(str((r as Json)['timestamp']) ?? '');
    if (!Number.isNaN(t)) span.add(new Date(t));
    if (f !== null) book.add(f);
  };
  const decoder = new TextDecoder('utf-8');
  // Bytes of the line being read; the parts are joined only once it ends.
  let parts: string[] = [];
  let pending = 0;
  for await (const chunk of readChunks(file, maxBytes)) {
    let from = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, from)) {
      if (pending + nl - from > MAX_LINE_BYTES) throw lineTooLong(lineNo + 1);
      parts.push(decoder.decode(chunk.subarray(from, nl)));
      take(parts.join(''));
      parts = [];
      pending = 0;
      from = nl + 1;
    }
    pending += chunk.length - from;
    if (pending > MAX_LINE_BYTES) throw lineTooLong(lineNo + 1);
    parts.push(decoder.decode(chunk.subarray(from), { stream: true }));
  }
  parts.push(decoder.decode());
  take(parts.join(''));
  if (records === 0) throw new ImportError('Not Nuclei JSON lines: the file holds no result');
  return importedScan('nuclei', { book, records, span });
}

/** Whether a JSON text opens more than MAX_LINE_VALUES objects, arrays or entries (`{`, `[`, `,` outside strings). */
function tooManyValues(line: string): boolean {
  let values = 0;
  let inString = false;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i += 1;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if ((c === 0x7b || c === 0x5b || c === 0x2c) && ++values > MAX_LINE_VALUES) return true;
  }
  return false;
}

const lineTooLong = (n: number) =>
  new ImportError(`Refused: line ${n} is longer than ${MAX_LINE_BYTES / 1024 / 1024} MiB (not Nuclei JSON lines)`);
