import type { Readable } from 'node:stream';
import { feedBytes, feedRefused, MAX_FEED_BYTES, nulRefused } from './input.ts';
import { CVE_ID } from './nvd.ts';

export interface EpssScore {
  cve_id: string;
  epss: number;
  percentile: number;
}

export interface EpssMeta {
  model_version: string | null;
  /** The `score_date` of the comment line, as written (an ISO date-time). */
  score_date: string | null;
}

const MAX_LINE = 4096;

/** Lines of the byte stream, without their line ends; a line longer than any feed row is refused. */
async function* lines(chunks: AsyncIterable<Buffer>, label: string): AsyncGenerator<string> {
  let pending = '';
  for await (const chunk of chunks) {
    pending += chunk.toString('latin1');
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    if (pending.length > MAX_LINE)
      throw feedRefused(label, `a line longer than ${MAX_LINE} characters: not an EPSS CSV`);
    for (const line of parts) yield line.replace(/\r$/, '');
  }
  if (pending !== '') yield pending.replace(/\r$/, '');
}

const probability = (raw: string | undefined): number | null => {
  if (raw === undefined || !/^\s*(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?\s*$/.test(raw)) return null;
  const n = Number(raw);
  return n >= 0 && n <= 1 ? n : null;
};

/**
 * FIRST's daily EPSS scores (`epss_scores-current.csv.gz` or `epss_scores-YYYY-MM-DD.csv[.gz]`):
 * an optional `#model_version:…,score_date:…` comment, the header `cve,epss,percentile`, one
 * row per CVE. `meta` is filled once the comment has been read. A malformed row is refused with
 * its line number.
 */
export async function* epssScores(source: Readable, label: string, meta: EpssMeta): AsyncGenerator<EpssScore> {
  let lineNo = 0;
  let columns: { cve: number; epss: number; percentile: number } | null = null;
  for await (const line of lines(feedBytes(source, label, MAX_FEED_BYTES.epss), label)) {
    lineNo++;
    if (line.includes('\u0000')) throw nulRefused(label, `on line ${lineNo}`);
    if (line.trim() === '') continue;
    if (columns === null) {
      if (line.startsWith('#')) {
        for (const pair of line.slice(1).split(',')) {
          const at = pair.indexOf(':');
          const [name, value] = [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
          if (name === 'model_version') meta.model_version = value;
          if (name === 'score_date') meta.score_date = value;
        }
        continue;
      }
      const header = line.split(',').map((h) => h.trim().toLowerCase());
      columns = { cve: header.indexOf('cve'), epss: header.indexOf('epss'), percentile: header.indexOf('percentile') };
      if (columns.cve < 0 || columns.epss < 0 || columns.percentile < 0)
        throw feedRefused(label, `line ${lineNo}: expected the header "cve,epss,percentile"; not an EPSS CSV`);
      continue;
    }
    const cells = line.split(',');
    const id = cells[columns.cve]?.trim() ?? '';
    const epss = probability(cells[columns.epss]);
    const percentile = probability(cells[columns.percentile]);
    if (!CVE_ID.test(id) || epss === null || percentile === null)
      throw feedRefused(label, `line ${lineNo}: expected "CVE-YYYY-NNNN,<0..1>,<0..1>", got "${line.slice(0, 80)}"`);
    yield { cve_id: id, epss, percentile };
  }
  if (columns === null) throw feedRefused(label, 'no "cve,epss,percentile" header: not an EPSS CSV');
}
