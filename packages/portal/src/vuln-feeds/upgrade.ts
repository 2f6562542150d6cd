import type pg from 'pg';
import type { Logger } from 'pino';
import { buildIndex } from './build.ts';
import { currentIndexVersion, feedsHeld, nvdRecordsToReread } from './build-queries.ts';

/**
 * At start: a portal upgraded to a new index format (VULN_INDEX_FORMAT) holds feeds but no index
 * its clients read, so it builds one from what is held; until then GET /api/vuln-index answers
 * 503 and clients keep their cached copy. NVD records an older portal read (migration 0024) are
 * counted in a warning: only importing the NVD files again reads them anew.
 */
export async function rebuildOutdatedIndex(pool: pg.Pool, now: () => Date, logger: Logger): Promise<void> {
  if ((await currentIndexVersion(pool)) !== null || !(await feedsHeld(pool))) return;
  const conn = await pool.connect();
  let failure: Error | undefined;
  try {
    const built = await buildIndex(conn, now());
    logger.info(
      { version: built.version, cves: built.cves, ranges: built.ranges, debian_packages: built.debian_packages },
      "vulnerability index rebuilt in this portal's format",
    );
  } catch (err) {
    failure = err as Error;
    throw err;
  } finally {
    conn.release(failure);
  }
  const stale = await nvdRecordsToReread(pool);
  if (stale > 0)
    logger.warn(
      { records: stale },
      'NVD records were read by an older portal: import the NVD files again to read their CPE versions and updates anew (docs/vuln-feeds.md#upgrading)',
    );
}
