import fs from 'node:fs';
import type { VulnIndex } from '@svc/protocol';
import { FORMATS, type ForeignFormat, type ImportedScan } from './common.ts';
import { checkedSize, headOf, ImportError } from './guard.ts';
import { parseNessus } from './nessus.ts';
import { parseNessusV1 } from './nessus-v1.ts';
import { parseNmapFile } from './nmap.ts';
import { parseNuclei } from './nuclei.ts';
import { parseOpenvas } from './openvas.ts';
import { parseOpenvasCsv } from './openvas-csv.ts';
import type { ImportTarget } from './targets.ts';

const HEAD_BYTES = 64 * 1024;

/** What `svc import` reads, for the message that refuses anything else. */
export const EXPECTED_FORMATS =
  'nmap XML, Nessus .nessus (v1 or v2), a Greenbone/OpenVAS report (XML, or the CSV results export), or Nuclei output (JSON lines, the -json-export array, or an empty file from a run without results)';

/** The Greenbone CSV results export's first columns (GSA's "CSV Results" report format). */
const GREENBONE_CSV_HEADER = /^"?IP"?,"?Hostname"?,"?Port"?,"?Port Protocol"?,"?CVSS"?,"?Severity"?,/;
const NUCLEI_KEY = /"(?:template-id|templateID)"\s*:/;

/**
 * Which format a file is, from its first 64 KiB: the root element of an XML document (comments,
 * processing instructions and the document type skipped), the header of Greenbone's CSV export,
 * a first line that is a JSON object with Nuclei's `template-id`, a JSON array whose first
 * object has one, or nothing at all (an empty file is Nuclei's output of a run without
 * results: no other format is ever empty). Null when it is none of them (a session file, say).
 */
export function detectFormat(file: string): ForeignFormat | null {
  const head = headOf(file, HEAD_BYTES).trimStart();
  if (head === '') return fs.statSync(file).size <= HEAD_BYTES ? 'nuclei' : null;
  if (head.startsWith('<')) {
    const root = rootElementOf(head);
    if (root === 'nmaprun') return 'nmap';
    if (root === 'NessusClientData_v2' || root === 'NessusClientData') return 'nessus';
    if (root === 'report' || root === 'get_reports_response') return 'openvas';
    return null;
  }
  if (GREENBONE_CSV_HEADER.test(head)) return 'openvas';
  // The -json-export array: the key names the format (its first object may not fit the head).
  if (/^\[\s*\{/.test(head)) return NUCLEI_KEY.test(head) ? 'nuclei' : null;
  if (head.startsWith('{')) {
    const first = head.split('\n', 1)[0]!;
    // A first line longer than the head (a result with its whole response) cannot be parsed
    // here: Nuclei writes `template-id` among its first keys, so its key names the format.
    if (
      first === head &&
      fs.statSync(file).size > HEAD_BYTES &&
      new RegExp(`^\\{[^\\n]*?${NUCLEI_KEY.source}`).test(first)
    )
      return 'nuclei';
    try {
      const line = JSON.parse(first) as Record<string, unknown>;
      if ('template-id' in line || 'templateID' in line) return 'nuclei';
    } catch {
      return null;
    }
  }
  return null;
}

/** What the file starts with, for the refusal of an unknown format. */
function firstWords(file: string): string {
  const head = headOf(file, 256).trimStart();
  if (head.startsWith('<')) {
    const root = rootElementOf(headOf(file, HEAD_BYTES).trimStart());
    return root === undefined
      ? 'XML without a root element in its first 64 KiB'
      : `XML with the root element <${root}>`;
  }
  if (head.startsWith('{') || head.startsWith('[')) return 'JSON without a Nuclei template-id';
  const line = head.split(/\r?\n/, 1)[0]!.slice(0, 60);
  return `"${line.replace(/[^\x20-\x7e]/g, '?')}${line.length === 60 ? '...' : ''}"`;
}

/**
 * The first element's name, after processing instructions, comments and the document type
 * (whose internal subset may hold `<!ENTITY ...>` declarations); undefined when the head ends
 * first. A scan with indexOf, linear in the head: backtracking regexes took seconds on a head
 * of 64 KiB of white space inside a document type.
 */
function rootElementOf(head: string): string | undefined {
  /** Just past the next `token` from `from`, or -1. */
  const past = (token: string, from: number) => {
    const i = from < 0 ? -1 : head.indexOf(token, from);
    return i === -1 ? -1 : i + token.length;
  };
  let at = 0;
  for (;;) {
    const lt = head.indexOf('<', at);
    if (lt === -1) return undefined;
    if (head.startsWith('<?', lt)) at = past('?>', lt + 2);
    else if (head.startsWith('<!--', lt)) at = past('-->', lt + 4);
    else if (head.startsWith('<!', lt)) {
      const close = head.indexOf('>', lt);
      const subset = head.indexOf('[', lt);
      at = subset !== -1 && (close === -1 || subset < close) ? past('>', past(']', subset)) : past('>', lt);
    } else return /^<([A-Za-z_][\w.:-]{0,1023})/.exec(head.slice(lt, lt + 1025))?.[1];
    if (at === -1) return undefined;
  }
}

export interface ParseOptions {
  format: ForeignFormat | 'auto';
  maxBytes: number;
  /** When a file names no scan time: the import's own clock. */
  now: Date;
  /** nmap's services are matched against it as a scan's are. */
  vulnIndex?: VulnIndex | null | undefined;
  /** What the scan was run against (`--targets`): a Nuclei result that names no host belongs to the only one. */
  targets?: readonly ImportTarget[] | undefined;
}

/** The file read in its format; every refusal names the file (its message is prefixed when it does not). */
export async function parseForeignFile(file: string, opts: ParseOptions): Promise<ImportedScan> {
  checkedSize(file, opts.maxBytes);
  const format = opts.format === 'auto' ? detectFormat(file) : opts.format;
  if (format === null)
    throw new ImportError(
      `${file} is not a format svc imports: it starts with ${firstWords(file)}; expected ${EXPECTED_FORMATS} (--format ${FORMATS.join('|')})`,
      'usage',
    );
  try {
    return await parseAs(format, file, opts);
  } catch (err) {
    if (!(err instanceof ImportError) || err.message.includes(file)) throw err;
    throw new ImportError(`${file}: ${err.message}`, err.kind);
  }
}

function parseAs(format: ForeignFormat, file: string, opts: ParseOptions): Promise<ImportedScan> {
  switch (format) {
    case 'nmap':
      return parseNmapFile(file, opts.maxBytes, opts.now, opts.vulnIndex);
    case 'nessus':
      return rootElementOf(headOf(file, HEAD_BYTES).trimStart()) === 'NessusClientData'
        ? parseNessusV1(file, opts.maxBytes)
        : parseNessus(file, opts.maxBytes);
    case 'openvas':
      return GREENBONE_CSV_HEADER.test(headOf(file, 1024).trimStart())
        ? parseOpenvasCsv(file, opts.maxBytes)
        : parseOpenvas(file, opts.maxBytes);
    case 'nuclei':
      return parseNuclei(file, opts.maxBytes, opts.targets ?? []);
  }
}
