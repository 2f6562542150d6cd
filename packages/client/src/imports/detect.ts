import fs from 'node:fs';
import type { VulnIndex } from '@svc/protocol';
import { FORMATS, type ForeignFormat, type ImportedScan } from './common.ts';
import { checkedSize, headOf, ImportError } from './guard.ts';
import { parseNessus } from './nessus.ts';
import { parseNmapFile } from './nmap.ts';
import { parseNuclei } from './nuclei.ts';
import { parseOpenvas } from './openvas.ts';

const HEAD_BYTES = 64 * 1024;

/**
 * Which format a file is, from its first 64 KiB: the root element of an XML document (comments,
 * processing instructions and the document type skipped), or a first line that is a JSON object
 * with Nuclei's `template-id`. Null when it is none of them (a session file, say).
 */
export function detectFormat(file: string): ForeignFormat | null {
  const head = headOf(file, HEAD_BYTES).trimStart();
  if (head.startsWith('<')) {
    const root = rootElementOf(head);
    if (root === 'nmaprun') return 'nmap';
    if (root === 'NessusClientData_v2') return 'nessus';
    if (root === 'report' || root === 'get_reports_response') return 'openvas';
    return null;
  }
  if (head.startsWith('{')) {
    const first = head.split('\n', 1)[0]!;
    // A first line longer than the head (a result with its whole response) cannot be parsed
    // here: Nuclei writes `template-id` among its first keys, so its key names the format.
    if (
      first === head &&
      fs.statSync(file).size > HEAD_BYTES &&
      /^\{[^\n]*?"(?:template-id|templateID)"\s*:/.test(first)
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
}

export async function parseForeignFile(file: string, opts: ParseOptions): Promise<ImportedScan> {
  checkedSize(file, opts.maxBytes);
  const format = opts.format === 'auto' ? detectFormat(file) : opts.format;
  if (format === null)
    throw new ImportError(
      `${file} is not a format svc imports: expected nmap XML, Nessus v2 (.nessus), a Greenbone/OpenVAS XML report or Nuclei JSON lines (--format ${FORMATS.join('|')})`,
      'usage',
    );
  switch (format) {
    case 'nmap':
      return parseNmapFile(file, opts.maxBytes, opts.now, opts.vulnIndex);
    case 'nessus':
      return parseNessus(file, opts.maxBytes);
    case 'openvas':
      return parseOpenvas(file, opts.maxBytes);
    case 'nuclei':
      return parseNuclei(file, opts.maxBytes);
  }
}
