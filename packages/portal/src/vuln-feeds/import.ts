import type { Readable } from 'node:stream';
import type pg from 'pg';
import { buildIndex, type BuiltIndex } from './build.ts';
import { debianPackages } from './debian.ts';
import { type DebianImported, replaceDebian } from './debian-queries.ts';
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
  debian?: FeedSource;
}

export interface ImportReport {
  nvd: { files: number; read: number; changed: number; total: number } | null;
  kev: { records: number; catalog_version: string | null } | null;
  epss: { records: number; score_date: string | null } | null;
  debian: DebianImported | null;
  index: BuiltIndex;
}

async function* allRecords(sources: FeedSource[]) {
  for (const source of sources) yield* nvdRecords(source.open(), source.label);
}

/** One connection for `run`, not reused after a failure: a COPY broken off by a bad file may leave it unusable. */
async function withConnection<T>(pool: pg.Pool, run: (conn: pg.PoolClient) => Promise<T>): Promise<T> {
  const conn = await pool.connect();
  let failure: Error | undefined;
  try {
    return await run(conn);
  } catch (err) {
    failure = err as Error;
    throw err;
  } finally {
    conn.release(failure);
  }
}

/**
 * Imports the feeds given, each in its own transaction (a bad file changes nothing of its
 * feed), then builds the index once from everything held, so a feed not given keeps what its
 * last import stored. When a file is refused after other feeds went in, the index is still
 * built from those before the refusal is thrown.
 */
export async function importFeeds(pool: pg.Pool, inputs: FeedInputs, now: () => Date): Promise<ImportReport> {
  const report: Omit<ImportReport, 'index'> = { nvd: null, kev: null, epss: null, debian: null };
  try {
    await withConnection(pool, async (conn) => {
      if (inputs.nvd !== undefined && inputs.nvd.length > 0) {
        const result = await importNvdRecords(conn, allRecords(inputs.nvd), now());
        report.nvd = { files: inputs.nvd.length, ...result };
      }
      if (inputs.kev !== undefined) {
        const catalog = await readKevCatalog(inputs.kev.open(), inputs.kev.label);
        await replaceKev(conn, catalog.entries, catalog.catalog_version, now());
        report.kev = { records: catalog.entries.length, catalog_version: catalog.catalog_version };
      }
      if (inputs.epss !== undefined) {
        const meta: EpssMeta = { model_version: null, score_date: null };
        const scores = epssScores(inputs.epss.open(), inputs.epss.label, meta);
        const records = await replaceEpss(conn, scores, () => meta.score_date, now());
        report.epss = { records, score_date: meta.score_date };
      }
      if (inputs.debian !== undefined)
        report.debian = await replaceDebian(conn, debianPackages(inputs.debian.open(), inputs.debian.label), now());
    });
  } catch (err) {
    if (report.nvd !== null || report.kev !== null || report.epss !== null)
      await withConnection(pool, (conn) => buildIndex(conn, now()));
    throw err;
  }
  return { ...report, index: await withConnection(pool, (conn) => buildIndex(conn, now())) };
}
