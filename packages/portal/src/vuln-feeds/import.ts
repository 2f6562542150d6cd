import type { Readable } from 'node:stream';
import type pg from 'pg';
import { buildIndex, type BuiltIndex } from './build.ts';
import { epssScores, type EpssMeta } from './epss.ts';
import { readKevCatalog } from './kev.ts';
import { nvdRecords } from './nvd.ts';
import { importNvdRecords, replaceEpss, replaceKev } from './queries.ts';

/** A feed file to read: how it is named in messages, and its bytes (plain or gzip). */
export interface FeedSource {
  label: string;
  open: () => Readable;
}

export interface FeedInputs {
  nvd?: FeedSource[];
  kev?: FeedSource;
  epss?: FeedSource;
}

export interface ImportReport {
  nvd: { files: number; read: number; total: number } | null;
  kev: { records: number; catalog_version: string | null } | null;
  epss: { records: number; score_date: string | null } | null;
  index: BuiltIndex;
}

async function* allRecords(sources: FeedSource[]) {
  for (const source of sources) yield* nvdRecords(source.open(), source.label);
}

/**
 * Imports the feeds given, each in its own transaction (a bad file changes nothing of its
 * feed), then builds the index once from everything held, so a feed not given keeps what its
 * last import stored.
 */
export async function importFeeds(pool: pg.Pool, inputs: FeedInputs, now: () => Date): Promise<ImportReport> {
  const conn = await pool.connect();
  let failure: Error | undefined;
  try {
    let nvd: ImportReport['nvd'] = null;
    let kev: ImportReport['kev'] = null;
    let epss: ImportReport['epss'] = null;
    if (inputs.nvd !== undefined && inputs.nvd.length > 0) {
      const result = await importNvdRecords(conn, allRecords(inputs.nvd), now());
      nvd = { files: inputs.nvd.length, ...result };
    }
    if (inputs.kev !== undefined) {
      const catalog = await readKevCatalog(inputs.kev.open(), inputs.kev.label);
      await replaceKev(conn, catalog.entries, catalog.catalog_version, now());
      kev = { records: catalog.entries.length, catalog_version: catalog.catalog_version };
    }
    if (inputs.epss !== undefined) {
      const meta: EpssMeta = { model_version: null, score_date: null };
      const records = await replaceEpss(
        conn,
        epssScores(inputs.epss.open(), inputs.epss.label, meta),
        () => meta.score_date,
        now(),
      );
      epss = { records, score_date: meta.score_date };
    }
    return { nvd, kev, epss, index: await buildIndex(conn, now()) };
  } catch (err) {
    // A COPY broken off by a bad file may leave the connection unusable: it is not reused.
    failure = err as Error;
    throw err;
  } finally {
    conn.release(failure);
  }
}
