import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// Distribution packages and CPE versions read as NISTIR 7696 does (docs/vuln-feeds.md,
// docs/vuln-matching.md):
// - The Debian security tracker becomes a fourth feed: vuln_debian holds its statement per
//   source package, CVE and release (the fixed version, null while open; releases it has not
//   decided on are not kept), vuln_debian_packages the versions each release's suites hold (a
//   banner's revision without a +debNN suffix is placed by them), vuln_debian_cves the
//   tracker's description of a CVE (the summary when NVD has none).
// - vuln_indexes records each stored index's format: a portal serves only an index of the
//   format it builds, and rebuilds one at start when the newest stored is older.
// - NVD ranges read before this version took a CPE version "-" (not applicable) for every
//   version and dropped pre-release updates (rc1, beta). A range with neither a version nor a
//   bound may be such a "-" or a true every-version "*": they cannot be told apart, so they go
//   (the false CVE-1999-0236 on every Apache httpd), and every NVD record's digest is cleared so
//   that importing the same files again rewrites each record under the new reading.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE vuln_debian (
      package text COLLATE "C" NOT NULL,
      cve_id text COLLATE "C" NOT NULL,
      release text COLLATE "C" NOT NULL,
      fixed_version text,
      unimportant boolean NOT NULL,
      PRIMARY KEY (package, cve_id, release)
    );
    CREATE TABLE vuln_debian_packages (
      package text COLLATE "C" PRIMARY KEY,
      releases jsonb NOT NULL
    );
    CREATE TABLE vuln_debian_cves (
      cve_id text COLLATE "C" PRIMARY KEY,
      summary text NOT NULL
    );
    ALTER TABLE vuln_feed_sources DROP CONSTRAINT vuln_feed_sources_feed_check;
    ALTER TABLE vuln_feed_sources ADD CONSTRAINT vuln_feed_sources_feed_check
      CHECK (feed IN ('nvd', 'kev', 'epss', 'debian'));
    ALTER TABLE vuln_indexes ADD COLUMN format integer NOT NULL DEFAULT 1;
    DELETE FROM vuln_nvd_ranges
      WHERE version IS NULL AND start_including IS NULL AND start_excluding IS NULL
        AND end_including IS NULL AND end_excluding IS NULL;
    UPDATE vuln_nvd_cves SET digest = '';
  `.execute(db);
}
