import type { VulnIndex } from '@svc/protocol';
import { FORMATS, type ForeignFormat, type ImportedScan } from './common.ts';
import { checkedSize, headOf, ImportError } from './guard.ts';
import { parseNessus } from './nessus.ts';
import { parseNmapFile } from './nmap.ts';
import { parseNuclei } from './nuclei.ts';
import { parseOpenvas } from './openvas.ts';

/**
 * Which format a file is, from its first 64 KiB: the root element of an XML document (comments,
 * processing instructions and the document type skipped), or a first line that is a JSON object
 * with Nuclei's `template-id`. Null when it is none of them (a session file, say).
 */
export function detectFormat(file: string): ForeignFormat | null {
  const head = headOf(file).trimStart();
  if (head.startsWith('<')) {
    const bare = head.replace(/<!--[\s\S]*?(-->|$)/g, '').replace(/<\?[\s\S]*?\?>/g, '');
    // The document type may hold an internal subset with `<!ENTITY ...>` declarations: skip them too.
    const root = /<([A-Za-z_][\w.:-]*)/.exec(
      bare.replace(/<!DOCTYPE[^[>]*(\[[\s\S]*?\])?\s*>/i, '').replace(/<![^>]*>/g, ''),
    )?.[1];
    if (root === 'nmaprun') return 'nmap';
    if (root === 'NessusClientData_v2') return 'nessus';
    if (root === 'report' || root === 'get_reports_response') return 'openvas';
    return null;
  }
  if (head.startsWith('{')) {
    const first = head.split('\n', 1)[0]!;
    try {
      const line = JSON.parse(first) as Record<string, unknown>;
      if ('template-id' in line || 'templateID' in line) return 'nuclei';
    } catch {
      return null;
    }
  }
  return null;
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
