import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { EpssScore } from './epss.ts';
import type { Feed } from './input.ts';
import type { KevEntry } from './kev.ts';
import type { NvdRecord } from './nvd.ts';

/** The statements that import the NVD, KEV and EPSS feeds (migration 0015); the Debian tracker's are in debian-queries.ts, the index's in build-queries.ts. */

export type Conn = pg.ClientBase;

/** Imports and builds take turns: a build never reads a half-replaced feed, two imports never interleave. */
export const LOCK = `SELECT pg_advisory_xact_lock(hashtext('svc.vuln_feeds'))`;

/** A COPY text-format field: NULL as \N, backslash, tab and line ends escaped. */
const field = (v: string | number | boolean | null): string =>
  v === null
    ? '\\N'
    : String(v).replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));

async function* copyLines<T>(
  rows: AsyncIterable<T> | Iterable<T>,
  cells: (row: T) => (string | number | boolean | null)[],
) {
  for await (const row of rows) yield `${cells(row).map(field).join('\t')}\n`;
}

export async function copyInto<T>(
  conn: Conn,
  statement: string,
  rows: AsyncIterable<T> | Iterable<T>,
  cells: (row: T) => (string | number | boolean | null)[],
): Promise<void> {
  await pipeline(Readable.from(copyLines(rows, cells)), conn.query(copyFrom(statement)));
}

export async function inTransaction<T>(conn: Conn, run: () => Promise<T>): Promise<T> {
  await conn.query('BEGIN');
  try {
    await conn.query(LOCK);
    const result = await run();
    await conn.query('COMMIT');
    return result;
  } catch (err) {
    await conn.query('ROLLBACK');
    throw err;
  }
}

export async function recordSource(
  conn: Conn,
  feed: Feed,
  records: number,
  detail: string | null,
  at: Date,
): Promise<void> {
  await conn.query(
    `INSERT INTO vuln_feed_sources (feed, records, detail, imported_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (feed) DO UPDATE SET records = EXCLUDED.records, detail = EXCLUDED.detail, imported_at = EXCLUDED.imported_at`,
    [feed, records, detail, at],
  );
}

export interface NvdImported {
  /** Records read from the files (a CVE in two files counts twice; the later file wins). */
  read: number;
  /** CVEs new or different from what was held (the rest was left as it was). */
  changed: number;
  /** CVE records the portal now holds. */
  total: number;
}

/**
 * NVD records in, as one transaction: each CVE read replaces what was held of it (its score,
 * summary and every range), so the yearly files and then the modified file may be imported in
 * any number of runs. Streams through COPY into a temporary table; the ranges travel as JSON
 * beside their record (one COPY at a time per connection).
 */
export async function importNvdRecords(conn: Conn, records: AsyncIterable<NvdRecord>, at: Date): Promise<NvdImported> {
  return inTransaction(conn, async () => {
    await conn.query(`CREATE TEMP TABLE nvd_in (
      ord integer, cve_id text, cvss real, cvss_version text, summary text, ranges jsonb) ON COMMIT DROP`);
    let read = 0;
    await copyInto(conn, 'COPY nvd_in FROM STDIN', records, (r) => [
      read++,
      r.id,
      r.cvss,
      r.cvss_version,
      r.summary,
      JSON.stringify(r.ranges),
    ]);
    // The last reading of each CVE, less those held exactly so already (a full re-import rewrites nothing).
    await conn.query(`CREATE TEMP TABLE nvd_latest ON COMMIT DROP AS
      SELECT * FROM (
        SELECT DISTINCT ON (cve_id) cve_id, cvss, cvss_version, summary, ranges,
               md5(row(cvss, cvss_version, summary, ranges)::text) AS digest
        FROM nvd_in ORDER BY cve_id, ord DESC) l
      WHERE NOT EXISTS (SELECT 1 FROM vuln_nvd_cves c WHERE c.cve_id = l.cve_id AND c.digest = l.digest)`);
    // Temporary tables are never analysed on their own; the statements below join on this one.
    await conn.query('ANALYZE nvd_latest');
    const upserted = await conn.query(`INSERT INTO vuln_nvd_cves (cve_id, cvss, cvss_version, summary, digest)
      SELECT cve_id, cvss, cvss_version, summary, digest FROM nvd_latest
      ON CONFLICT (cve_id) DO UPDATE SET cvss = EXCLUDED.cvss, cvss_version = EXCLUDED.cvss_version,
        summary = EXCLUDED.summary, digest = EXCLUDED.digest`);
    await conn.query('DELETE FROM vuln_nvd_ranges r USING nvd_latest l WHERE r.cve_id = l.cve_id');
    await conn.query(`INSERT INTO vuln_nvd_ranges (cve_id, product, version, start_including, start_excluding, end_including, end_excluding)
      SELECT l.cve_id, x.product, x.version, x.start_including, x.start_excluding, x.end_including, x.end_excluding
      FROM nvd_latest l, jsonb_to_recordset(l.ranges) AS x(product text, version text, start_including text,
        start_excluding text, end_including text, end_excluding text)`);
    const { rows } = await conn.query<{ n: number }>('SELECT count(*)::int AS n FROM vuln_nvd_cves');
    const total = rows[0]?.n ?? 0;
    await recordSource(conn, 'nvd', total, null, at);
    return { read, changed: upserted.rowCount ?? 0, total };
  });
}

/** The catalogue replaces the previous one whole (an entry CISA removed is no longer known-exploited). */
export async function replaceKev(
  conn: Conn,
  entries: KevEntry[],
  catalogVersion: string | null,
  at: Date,
): Promise<void> {
  await inTransaction(conn, async () => {
    await conn.query('DELETE FROM vuln_kev');
    await copyInto(
      conn,
      'COPY vuln_kev (cve_id, date_added, due_date, known_ransomware, summary) FROM STDIN',
      entries,
      (e) => [e.cve_id, e.date_added, e.due_date, e.known_ransomware, e.summary],
    );
    await recordSource(conn, 'kev', entries.length, catalogVersion, at);
  });
}

/** The day's scores replace the previous day's whole; a CVE listed twice keeps its last row. Returns the rows held. */
export async function replaceEpss(
  conn: Conn,
  scores: AsyncIterable<EpssScore>,
  scoreDate: () => string | null,
  at: Date,
): Promise<number> {
  return inTransaction(conn, async () => {
    await conn.query(
      'CREATE TEMP TABLE epss_in (ord integer, cve_id text, epss double precision, percentile double precision) ON COMMIT DROP',
    );
    let ord = 0;
    await copyInto(conn, 'COPY epss_in FROM STDIN', scores, (s) => [ord++, s.cve_id, s.epss, s.percentile]);
    await conn.query('DELETE FROM vuln_epss');
    const { rowCount } = await conn.query(`INSERT INTO vuln_epss (cve_id, epss, percentile)
      SELECT DISTINCT ON (cve_id) cve_id, epss, percentile FROM epss_in ORDER BY cve_id, ord DESC`);
    await recordSource(conn, 'epss', rowCount ?? 0, scoreDate(), at);
    return rowCount ?? 0;
  });
}
