import fs from 'node:fs';
import type { XmlLimits } from '../scanner/parse/xml-limits.ts';

/**
 * What every import refuses before or while it reads (docs/cli/import.md "Limits"): files over
 * a size limit, XML with a document type declaration that declares anything (entities, an
 * external DTD), nesting deeper than a fixed limit, a JSON line over a length limit, and content
 * of another format. Parsers read the file in chunks and keep one host or report item at a time;
 * the numbers below bound what that item and everything kept may hold, so an import's memory is
 * bounded whatever the file's size (docs/cli/import.md "Memory").
 */

/** Default largest file `svc import` reads: 512 MiB (`--max-size`). */
export const DEFAULT_MAX_BYTES = 512 * 1024 * 1024;
/** Deepest element nesting accepted; nmap's NSE tables are the deepest real case, far below it. */
export const MAX_XML_DEPTH = 64;
/** Longest JSON line accepted (a Nuclei result with its request and response is well below). */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;
/**
 * Most JSON values (objects, arrays and their entries) in one line: JSON.parse makes an object of
 * each, so 16 MiB of `{},` would take some 500 MB. A Nuclei result holds a few dozen.
 */
export const MAX_LINE_VALUES = 100_000;
/** Longest text kept of one field (plugin output, description); the rest is cut with a marker. */
export const MAX_FIELD_CHARS = 64 * 1024;
/** Longest element, attribute or entity name (real ones are a few dozen characters). */
export const MAX_XML_NAME_CHARS = 1024;
/** Most attributes on one element (nmap's and Nessus's carry at most about a dozen). */
export const MAX_XML_ATTRIBUTES = 1024;
/**
 * Most elements in the one item held at a time (an nmap host, a Nessus ReportItem or
 * HostProperties, a Greenbone result): an nmap host with all 65,535 ports open is about
 * 200,000 (260,000 with a CPE each).
 */
export const MAX_ITEM_ELEMENTS = 300_000;
/** Most characters (attribute values and texts, each already cut) in the one item held at a time. */
export const MAX_ITEM_CHARS = 16 * 1024 * 1024;
/** Most findings one import keeps (the pipeline's time and memory grow with them). */
export const MAX_FINDINGS = 50_000;
/** Most hosts one import keeps. */
export const MAX_HOSTS = 65_536;
/** Most characters all kept findings and hosts hold together, after each field's cut. */
export const MAX_KEPT_CHARS = 64 * 1024 * 1024;

/**
 * An import that cannot go on. `usage` when the file named is not one to import (missing, not a
 * known format); `refused` when its content is hostile, too big, malformed or cut short.
 */
export class ImportError extends Error {
  override name = 'ImportError';
  readonly kind: 'usage' | 'refused';
  constructor(message: string, kind: 'usage' | 'refused' = 'refused') {
    super(message);
    this.kind = kind;
  }
}

const mib = (n: number) => `${Number((n / 1024 / 1024).toFixed(3))} MiB`;

/** The file's size, refused when it is not a regular file or is over the limit. */
export function checkedSize(file: string, maxBytes: number): number {
  const st = fs.statSync(file, { throwIfNoEntry: false });
  if (st === undefined) throw new ImportError(`No such file: ${file}`, 'usage');
  if (!st.isFile()) throw new ImportError(`Not a file: ${file}`, 'usage');
  if (st.size > maxBytes)
    throw new ImportError(`${file} is ${st.size} bytes, over the import limit of ${mib(maxBytes)} (--max-size)`);
  return st.size;
}

/** The file in 64 KiB chunks; a file that grows past the limit while read is refused too. */
export async function* readChunks(file: string, maxBytes: number): AsyncGenerator<Buffer> {
  checkedSize(file, maxBytes);
  let read = 0;
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 64 * 1024 })) {
    const buf = chunk as Buffer;
    read += buf.length;
    if (read > maxBytes) throw new ImportError(`${file} grew over the import limit of ${mib(maxBytes)} while read`);
    yield buf;
  }
}

/** The first bytes of the file as text (format detection), at most `max`. */
export function headOf(file: string, max = 64 * 1024): string {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(max);
    const n = fs.readSync(fd, buf, 0, max, 0);
    return buf
      .subarray(0, n)
      .toString('utf8')
      .replace(/^\uFEFF/, '');
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * A document type declaration is refused unless it is a bare name (`<!DOCTYPE nmaprun>`, which
 * nmap writes): an internal subset can declare entities (billion laughs) and an external id
 * points at a DTD to fetch (XXE). Checked before any element is read.
 */
export function refuseDoctype(doctype: string): void {
  // A long one was cut while read (xml-limits.ts), so what follows the cut cannot be judged.
  if (doctype.length > MAX_FIELD_CHARS)
    throw new ImportError(`Refused: the XML's document type declaration is longer than ${MAX_FIELD_CHARS} characters`);
  const body = doctype.trim();
  if (/[[<]/.test(body) || /\b(SYSTEM|PUBLIC)\b/.test(body))
    throw new ImportError(
      'Refused: the XML declares a document type with entities or an external DTD (<!DOCTYPE ... [ ] or SYSTEM/PUBLIC); exports of nmap, Nessus and Greenbone never do',
    );
}

/** What the XML parsers (imports/xml-items.ts, the nmap stream) may hold while reading a file. */
export const IMPORT_XML_LIMITS: XmlLimits = {
  maxDepth: MAX_XML_DEPTH,
  maxTextChars: MAX_FIELD_CHARS,
  maxNameChars: MAX_XML_NAME_CHARS,
  maxAttributes: MAX_XML_ATTRIBUTES,
  maxItemElements: MAX_ITEM_ELEMENTS,
  maxItemChars: MAX_ITEM_CHARS,
  refuse: (reason) => new ImportError(`Refused: ${reason}`),
};

/** The note that ends a cut field. */
export const CUT_NOTE = `\n[cut at ${MAX_FIELD_CHARS} characters]`;

/**
 * The cut rule, the one for every text an import keeps (imports/keep.ts applies it): trimmed,
 * and past MAX_FIELD_CHARS characters cut there with CUT_NOTE.
 */
export function fieldText(text: string): string {
  const t = text.trim();
  return t.length > MAX_FIELD_CHARS ? `${t.slice(0, MAX_FIELD_CHARS)}${CUT_NOTE}` : t;
}
