import { csvLines } from './csv.ts';
import { defectDojoChunks } from './defectdojo.ts';
import type { ExportFormat } from './formats.ts';
import type { ExportOptions } from './model.ts';
import { sarifChunks } from './sarif.ts';

/**
 * Exports of a session's findings (docs/exports.md): pure functions of a parsed session file,
 * shared by the portal's export endpoint and `svc export`. Each yields its document in
 * pieces (a line, a result, a finding) so a caller can stream a large session.
 */
export { CSV_COLUMNS, csvCell, neutraliseFormula, toCsv } from './csv.ts';
export { DEFECTDOJO_TEST_TYPE, toDefectDojo } from './defectdojo.ts';
export { type ExportFinding, type ExportOptions, exportFindingsOf } from './model.ts';
export { SARIF_FINGERPRINT_KEY, SARIF_SCHEMA_URI, sarifArtifactUri, toSarif } from './sarif.ts';

const CHUNKS: Record<ExportFormat, (doc: unknown, opts?: ExportOptions) => Generator<string>> = {
  csv: csvLines,
  sarif: sarifChunks,
  defectdojo: defectDojoChunks,
};

export function exportChunks(format: ExportFormat, doc: unknown, opts: ExportOptions = {}): Generator<string> {
  return CHUNKS[format](doc, opts);
}
