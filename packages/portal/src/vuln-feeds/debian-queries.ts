import type { DebianPackageRecord } from './debian.ts';
import { type Conn, copyInto, inTransaction, recordSource } from './queries.ts';

/** The statements on the Debian tracker's tables (migration 0024). */

export interface DebianImported {
  packages: number;
  /** Distinct CVEs with a statement. */
  cves: number;
  /** Statements held: one per package, CVE and release. */
  statements: number;
}

/**
 * The tracker's data replaces what was held whole, as one transaction (a CVE the tracker no
 * longer lists for a package is no longer judged by it). Streams through COPY into a temporary
 * table, a package per row with its statements as JSON.
 */
export async function replaceDebian(
  conn: Conn,
  packages: AsyncIterable<DebianPackageRecord>,
  at: Date,
): Promise<DebianImported> {
  return inTransaction(conn, async () => {
    await conn.query(`CREATE TEMP TABLE debian_in (
      ord integer, package text, releases jsonb, statements jsonb, descriptions jsonb) ON COMMIT DROP`);
    let ord = 0;
    await copyInto(conn, 'COPY debian_in FROM STDIN', packages, (p) => [
      ord++,
      p.package,
      JSON.stringify(p.releases),
      JSON.stringify(p.statements),
      JSON.stringify(p.descriptions),
    ]);
    // A package named twice in a file keeps its last reading, as JSON.parse would.
    await conn.query('DELETE FROM debian_in a USING debian_in b WHERE a.package = b.package AND a.ord < b.ord');
    await conn.query('DELETE FROM vuln_debian');
    await conn.query('DELETE FROM vuln_debian_packages');
    await conn.query('DELETE FROM vuln_debian_cves');
    await conn.query('INSERT INTO vuln_debian_packages (package, releases) SELECT package, releases FROM debian_in');
    const statements = await conn.query(`INSERT INTO vuln_debian (package, cve_id, release, fixed_version, unimportant)
      SELECT i.package, s.cve_id, s.release, s.fixed_version, s.unimportant
      FROM debian_in i, jsonb_to_recordset(i.statements) AS s(cve_id text, release text, fixed_version text, unimportant boolean)`);
    await conn.query(`INSERT INTO vuln_debian_cves (cve_id, summary)
      SELECT DISTINCT ON (d.key) d.key, d.value FROM debian_in i, jsonb_each_text(i.descriptions) d
      ORDER BY d.key, i.package`);
    const { rows } = await conn.query<{ packages: number; cves: number }>(
      `SELECT (SELECT count(*)::int FROM vuln_debian_packages) AS packages,
              (SELECT count(DISTINCT cve_id)::int FROM vuln_debian) AS cves`,
    );
    const counts = { packages: rows[0]?.packages ?? 0, cves: rows[0]?.cves ?? 0 };
    await recordSource(conn, 'debian', counts.packages, null, at);
    return { ...counts, statements: statements.rowCount ?? 0 };
  });
}
