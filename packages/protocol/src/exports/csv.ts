import { type ExportFinding, type ExportOptions, exportFindingsOf, exportSessionOf } from './model.ts';

/**
 * CSV of a session's findings (RFC 4180: CRLF line ends, a header row, fields quoted when
 * they hold a quote, comma, CR or LF; UTF-8 without a byte-order mark). The column order is
 * part of the format (docs/exports.md) and only ever grows at the end. Several values in one
 * cell (CVEs, CWEs, URLs) are joined with "; ".
 */
export const CSV_COLUMNS = [
  'fingerprint',
  'session_id',
  'finding_id',
  'rule_id',
  'title',
  'severity',
  'cvss',
  'kev',
  'kev_date_added',
  'epss',
  'epss_percentile',
  'host',
  'hostname',
  'port',
  'protocol',
  'service',
  'cve',
  'cwe',
  'status',
  'first_seen',
  'exception_status',
  'exception_reason',
  'exception_approver',
  'exception_expiry',
  'description',
  'remediation',
  'evidence',
  'references',
  'session_url',
  // Added after the columns of the first version, so readers by position keep working.
  'disposition',
  'disposition_reason',
] as const;

type Column = (typeof CSV_COLUMNS)[number];

/**
 * What a spreadsheet may act on at the start of a cell (OWASP, CSV Injection, and more): = + - @
 * and |, their fullwidth and small forms and the minus sign, and anything it may skip before
 * it looks for a formula: a tab, CR, LF or other control character, a space, a no-break or
 * other Unicode space, and invisible format characters (byte-order mark, zero-width space).
 */
const FORMULA_START =
  /^(?:[=+\-@|\u2212\uFE62\uFE63\uFE66\uFE6B\uFF0B\uFF0D\uFF1D\uFF20\uFF5C]|[\s\p{Z}\p{Cc}\p{Cf}])/u;

/**
 * A cell that starts with one of those gets a leading apostrophe, which spreadsheets show as
 * text. Every CSV the project writes goes through this (csvCell).
 */
export function neutraliseFormula(cell: string): string {
  return FORMULA_START.test(cell) ? `'${cell}` : cell;
}

export function csvCell(value: string | number | boolean | null): string {
  if (value === null) return '';
  const text = neutraliseFormula(String(value));
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

const list = (v: string[]) => (v.length === 0 ? null : v.join('; '));

function cellsOf(
  f: ExportFinding,
  sessionId: string,
  opts: ExportOptions,
): Record<Column, string | number | boolean | null> {
  return {
    ...f,
    session_id: sessionId,
    finding_id: f.id,
    cve: list(f.cve),
    cwe: list(f.cwe),
    references: list(f.urls),
    session_url: opts.sessionUrl ?? null,
  };
}

/** The CSV a line at a time (header first), each ending in CRLF: a caller may stream them. */
export function* csvLines(doc: unknown, opts: ExportOptions = {}): Generator<string> {
  const { session_id } = exportSessionOf(doc);
  yield `${CSV_COLUMNS.join(',')}\r\n`;
  for (const f of exportFindingsOf(doc, opts.today)) {
    const cells = cellsOf(f, session_id, opts);
    yield `${CSV_COLUMNS.map((c) => csvCell(cells[c])).join(',')}\r\n`;
  }
}

export const toCsv = (doc: unknown, opts: ExportOptions = {}): string => [...csvLines(doc, opts)].join('');
