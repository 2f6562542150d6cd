import type pg from 'pg';
import { VULN_INDEX_FORMAT } from '@svc/protocol';
import type { Feed } from './input.ts';
import { type Conn, LOCK } from './queries.ts';

/** The statements that read the feed tables for a build and store, serve and check built indexes (migrations 0015, 0024). */

export interface SourceRow {
  feed: Feed;
  records: number;
  detail: string | null;
  imported_at: Date;
}

export interface IndexCveRow {
  cve_id: string;
  cvss: number | null;
  cvss_version: string | null;
  summary: string;
  date_added: string | null;
  due_date: string | null;
  known_ransomware: boolean | null;
  epss: number | null;
  percentile: number | null;
}

export interface IndexRangeRow {
  product: string;
  cve_id: string;
  version: string | null;
  start_including: string | null;
  start_excluding: string | null;
  end_including: string | null;
  end_excluding: string | null;
}

export interface IndexDebianRow {
  package: string;
  /** The package's versions per release (vuln_debian_packages). */
  releases: Record<string, string[]>;
  cve_id: string;
  release: string;
  fixed_version: string | null;
  unimportant: boolean;
}

const BATCH = 5000;

/** A query's rows a batch at a time through a cursor (the transaction is the caller's). */
async function* cursorRows<T extends pg.QueryResultRow>(
  conn: Conn,
  name: string,
  statement: string,
): AsyncGenerator<T> {
  await conn.query(`DECLARE ${name} NO SCROLL CURSOR FOR ${statement}`);
  for (;;) {
    const { rows } = await conn.query<T>(`FETCH ${BATCH} FROM ${name}`);
    yield* rows;
    if (rows.length < BATCH) break;
  }
  await conn.query(`CLOSE ${name}`);
}

/**
 * What a build reads, in one snapshot and under the feeds' lock: the sources, then every CVE any
 * feed knows (NVD, KEV, EPSS, the Debian tracker; ordered by id, bytewise), then every range
 * ordered by product and CVE, then the Debian tracker's statements ordered by package, CVE and
 * release, so the index is written as it is read.
 */
export async function readForBuild<T>(
  conn: Conn,
  build: (input: {
    sources: SourceRow[];
    cves: AsyncIterable<IndexCveRow>;
    ranges: AsyncIterable<IndexRangeRow>;
    debian: AsyncIterable<IndexDebianRow>;
  }) => Promise<T>,
): Promise<T> {
  await conn.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  try {
    await conn.query(LOCK);
    // Every row is read: plan for all of them, not for the cursor's first few.
    await conn.query('SET LOCAL cursor_tuple_fraction = 1.0');
    const sources = (await conn.query<SourceRow>('SELECT feed, records, detail, imported_at FROM vuln_feed_sources'))
      .rows;
    const result = await build({
      sources,
      cves: cursorRows<IndexCveRow>(
        conn,
        'vuln_index_cves',
        `SELECT c.cve_id, n.cvss, n.cvss_version, COALESCE(NULLIF(n.summary, ''), k.summary, d.summary, '') AS summary,
                k.date_added, k.due_date, k.known_ransomware, e.epss, e.percentile
         FROM (SELECT cve_id FROM vuln_nvd_cves UNION SELECT cve_id FROM vuln_kev
               UNION SELECT cve_id FROM vuln_epss UNION SELECT cve_id FROM vuln_debian) c
         LEFT JOIN vuln_nvd_cves n ON n.cve_id = c.cve_id
         LEFT JOIN vuln_kev k ON k.cve_id = c.cve_id
         LEFT JOIN vuln_epss e ON e.cve_id = c.cve_id
         LEFT JOIN vuln_debian_cves d ON d.cve_id = c.cve_id
         ORDER BY c.cve_id COLLATE "C"`,
      ),
      ranges: cursorRows<IndexRangeRow>(
        conn,
        'vuln_index_ranges',
        `SELECT * FROM (SELECT DISTINCT product, cve_id, version, start_including, start_excluding, end_including, end_excluding
                        FROM vuln_nvd_ranges) r
         ORDER BY product COLLATE "C", cve_id COLLATE "C", version COLLATE "C" NULLS FIRST,
                  start_including COLLATE "C" NULLS FIRST, start_excluding COLLATE "C" NULLS FIRST,
                  end_including COLLATE "C" NULLS FIRST, end_excluding COLLATE "C" NULLS FIRST`,
      ),
      debian: cursorRows<IndexDebianRow>(
        conn,
        'vuln_index_debian',
        `SELECT d.package, p.releases, d.cve_id, d.release, d.fixed_version, d.unimportant
         FROM vuln_debian d JOIN vuln_debian_packages p ON p.package = d.package
         ORDER BY d.package, d.cve_id, d.release`,
      ),
    });
    await conn.query('COMMIT');
    return result;
  } catch (err) {
    await conn.query('ROLLBACK');
    throw err;
  }
}

/** How many built indexes are kept (the newest is served; older ones only for a look back). */
export const KEPT_INDEXES = 3;

export interface StoredIndex {
  version: string;
  generated_at: Date;
  cves: number;
  products: number;
  ranges: number;
  body: Buffer;
}

/** The new index becomes the newest row (again, when an older one had the same content); old ones beyond KEPT_INDEXES go. */
export async function storeIndex(conn: Conn, index: StoredIndex): Promise<void> {
  await conn.query('BEGIN');
  try {
    await conn.query('DELETE FROM vuln_indexes WHERE version = $1', [index.version]);
    await conn.query(
      `INSERT INTO vuln_indexes (version, generated_at, cves, products, ranges, body, format)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [index.version, index.generated_at, index.cves, index.products, index.ranges, index.body, VULN_INDEX_FORMAT],
    );
    await conn.query(
      'DELETE FROM vuln_indexes WHERE seq NOT IN (SELECT seq FROM vuln_indexes ORDER BY seq DESC LIMIT $1)',
      [KEPT_INDEXES],
    );
    await conn.query('COMMIT');
  } catch (err) {
    await conn.query('ROLLBACK');
    throw err;
  }
}

/**
 * The version every replica serves: the newest stored index of the format this portal builds
 * (one an older portal built is never served: its clients' format); null when there is none.
 */
export async function currentIndexVersion(db: pg.Pool | Conn): Promise<string | null> {
  const { rows } = await db.query<{ version: string }>(
    'SELECT version FROM vuln_indexes WHERE format = $1 ORDER BY seq DESC LIMIT 1',
    [VULN_INDEX_FORMAT],
  );
  return rows[0]?.version ?? null;
}

/** Whether any feed was ever imported (an index can be built). */
export async function feedsHeld(db: pg.Pool | Conn): Promise<boolean> {
  const { rows } = await db.query<{ held: boolean }>('SELECT EXISTS (SELECT 1 FROM vuln_feed_sources) AS held');
  return rows[0]?.held === true;
}

/** NVD records an older portal read, which only importing the NVD files again reads anew (migration 0024). */
export async function nvdRecordsToReread(db: pg.Pool | Conn): Promise<number> {
  const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM vuln_nvd_cves WHERE digest = ''");
  return rows[0]?.n ?? 0;
}

/** A stored index's gzip bytes, null when that version is gone. */
export async function indexBody(db: pg.Pool | Conn, version: string): Promise<Buffer | null> {
  const { rows } = await db.query<{ body: Buffer }>('SELECT body FROM vuln_indexes WHERE version = $1', [version]);
  return rows[0]?.body ?? null;
}
