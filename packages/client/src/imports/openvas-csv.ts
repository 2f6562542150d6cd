import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { severityOfCvss } from '@svc/protocol';
import { parse } from 'csv-parse';
import type { ScanFinding } from '../pipeline/types.ts';
import {
  categoryOf,
  cveList,
  cvssOf,
  given,
  ImportBook,
  type ImportedScan,
  importedScan,
  referencesOf,
  type Severity,
  TimeSpan,
  validPort,
} from './common.ts';
import { ImportError, MAX_LINE_BYTES, readChunks } from './guard.ts';

/**
 * Greenbone/OpenVAS CSV results (GSA's "CSV Results" report format): a header row, then one row
 * per result with `IP`, `Hostname`, `Port`, `Port Protocol`, `CVSS`, `Severity`, `QoD` (newer
 * versions), `Solution Type`, `NVT Name`, `Summary`, `Specific Result`, `NVT OID`, `CVEs`,
 * `Task Name`, `Timestamp`, `Impact`, `Solution`, `Vulnerability Insight`, `Other References`
 * and more. The same NVT gives the same rule as the XML report (`openvas:<oid>`). Rows are read
 * one at a time by csv-parse (RFC 4180 quoting, fields over several lines), each row bounded.
 */

const REQUIRED = ['IP', 'NVT Name', 'NVT OID'] as const;
/** More columns than any version of the export writes (about 30), so a row stays bounded. */
const MAX_COLUMNS = 256;

type Row = Record<string, string>;

/** `CVSS` when it is a score; else the `Severity` word (`Log` is info); null for a false positive. */
function severityOf(row: Row): Severity | null {
  const score = cvssOf(row['CVSS']);
  if (score !== undefined) return severityOfCvss(score);
  const word = (row['Severity'] ?? '').trim().toLowerCase();
  if (word === 'false positive' || word === 'error' || Number(row['CVSS']) < 0) return null;
  return (['critical', 'high', 'medium', 'low'] as const).find((s) => s === word) ?? 'info';
}

const text = (row: Row, column: string) => {
  const t = row[column]?.trim();
  return t === undefined || t === '' ? undefined : t;
};

function rowFinding(row: Row): ScanFinding | null {
  const severity = severityOf(row);
  if (severity === null) return null;
  const title = text(row, 'NVT Name') ?? 'Greenbone result';
  const score = cvssOf(row['CVSS']);
  const qod = Number(text(row, 'QoD'));
  const description = [text(row, 'Summary'), text(row, 'Vulnerability Insight'), text(row, 'Impact')].filter(
    (t) => t !== undefined,
  );
  const urls = (text(row, 'Other References') ?? '').split(/[\s,]+/).filter((u) => /^https?:\/\//.test(u));
  return {
    rule_id: `openvas:${text(row, 'NVT OID') ?? '0'}`,
    title,
    severity,
    host: text(row, 'IP') ?? '',
    ...given('hostname', text(row, 'Hostname')),
    ...given('port', validPort(Number(text(row, 'Port')))),
    ...given('protocol', text(row, 'Port Protocol')?.toLowerCase()),
    ...given('evidence', text(row, 'Specific Result')),
    ...given('description', [...new Set(description)].join('\n\n')),
    ...given('remediation', text(row, 'Solution')),
    ...referencesOf(cveList((text(row, 'CVEs') ?? '').split(/[\s,]+/)), [], urls),
    ...given('cvss', score !== undefined && score > 0 ? score : undefined),
    ...given('qod', text(row, 'QoD') !== undefined && Number.isFinite(qod) ? qod : undefined),
    ...given('category', categoryOf(title)),
  };
}

/** The header: the export's column names, refused when it is not one. */
function columnsOf(header: string[]): string[] {
  if (header.length > MAX_COLUMNS)
    throw new ImportError(`Refused: the CSV header has ${header.length} columns, more than ${MAX_COLUMNS}`);
  const missing = REQUIRED.filter((c) => !header.includes(c));
  if (missing.length > 0)
    throw new ImportError(
      `Not a Greenbone CSV results export: the header lacks ${missing.join(', ')} (expected GSA's "CSV Results" columns IP, Hostname, Port, Port Protocol, CVSS, Severity, ..., NVT Name, ..., NVT OID)`,
    );
  return header;
}

export async function parseOpenvasCsv(file: string, maxBytes: number): Promise<ImportedScan> {
  const book = new ImportBook();
  const span = new TimeSpan();
  const tasks = new Set<string>();
  let records = 0;
  const parser = parse({
    bom: true,
    columns: columnsOf,
    skip_empty_lines: true,
    max_record_size: MAX_LINE_BYTES,
  });
  try {
    await pipeline(Readable.from(readChunks(file, maxBytes)), parser, async (rows: AsyncIterable<Row>) => {
      for await (const row of rows) {
        records += 1;
        const t = Date.parse(text(row, 'Timestamp') ?? '');
        if (!Number.isNaN(t)) span.add(new Date(t));
        const task = text(row, 'Task Name');
        if (task !== undefined && tasks.size < 16) tasks.add(task);
        const f = rowFinding(row);
        if (f !== null) book.add(f);
        // A row whose result was left out still names a host that was scanned.
        else book.hosts.add(text(row, 'IP') ?? '');
      }
    });
  } catch (err) {
    if (err instanceof ImportError) throw err;
    throw new ImportError(`Malformed Greenbone CSV: ${(err as Error).message}`);
  }
  return {
    ...importedScan('openvas', {
      book,
      records,
      span,
      // Every run of a Greenbone task exports its name: the target remediation tracks.
      target: tasks.size === 1 ? [...tasks][0] : undefined,
    }),
    variant: 'CSV',
  };
}
