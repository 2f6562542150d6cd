import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// Vulnerability feeds imported by an operator (docs/vuln-feeds.md). Each feed keeps
// only what the index needs, in its own table, so importing KEV or EPSS alone rebuilds the
// index without the NVD files: vuln_nvd_cves and vuln_nvd_ranges (one row per vulnerable
// cpeMatch) from the NVD JSON 2.0 files, vuln_kev from CISA's catalogue, vuln_epss from
// FIRST's CSV, vuln_feed_sources what was last imported of each. The ranges carry no foreign
// key: only the import writes them, always with their CVE row, and a check per row would cost
// more than the rest of a quarter-million-record import. Ids, products and versions compare
// bytewise (COLLATE "C"): the index is ordered that way, and a locale's rules only slow the
// sorts and joins of a build. Dates stay text (YYYY-MM-DD,
// as the feeds write them). vuln_indexes holds the built index, gzip-compressed JSON, per
// version (its content hash); the newest row is the one every replica serves, the last few are
// kept.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE vuln_nvd_cves (
      cve_id text COLLATE "C" PRIMARY KEY,
      cvss real,
      cvss_version text,
      summary text NOT NULL,
      -- md5 of the record as imported: a record read again unchanged is left as it is.
      digest text NOT NULL
    );
    CREATE TABLE vuln_nvd_ranges (
      seq bigserial PRIMARY KEY,
      cve_id text COLLATE "C" NOT NULL,
      product text COLLATE "C" NOT NULL,
      version text COLLATE "C",
      start_including text COLLATE "C",
      start_excluding text COLLATE "C",
      end_including text COLLATE "C",
      end_excluding text COLLATE "C"
    );
    CREATE INDEX vuln_nvd_ranges_cve_idx ON vuln_nvd_ranges (cve_id);
    CREATE TABLE vuln_kev (
      cve_id text COLLATE "C" PRIMARY KEY,
      date_added text NOT NULL,
      due_date text,
      known_ransomware boolean NOT NULL,
      summary text NOT NULL
    );
    CREATE TABLE vuln_epss (
      cve_id text COLLATE "C" PRIMARY KEY,
      epss double precision NOT NULL,
      percentile double precision NOT NULL
    );
    CREATE TABLE vuln_feed_sources (
      feed text PRIMARY KEY CHECK (feed IN ('nvd', 'kev', 'epss')),
      records integer NOT NULL,
      detail text,
      imported_at timestamptz NOT NULL
    );
    CREATE TABLE vuln_indexes (
      seq bigserial PRIMARY KEY,
      version text COLLATE "C" NOT NULL UNIQUE,
      generated_at timestamptz NOT NULL,
      cves integer NOT NULL,
      products integer NOT NULL,
      ranges integer NOT NULL,
      body bytea NOT NULL
    );
  `.execute(db);
}
