import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// Findings carry the prioritisation the scanner takes from the vulnerability index
// (docs/vuln-matching.md): known exploited (CISA KEV, with the catalogue's date) and EPSS. The
// findings table shows them and filters on kev. Rows indexed before this migration come from
// files written before these fields existed, so false and null are what they say.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE session_findings
      ADD COLUMN kev boolean NOT NULL DEFAULT false,
      ADD COLUMN kev_date_added text,
      ADD COLUMN epss double precision,
      ADD COLUMN epss_percentile double precision;
  `.execute(db);
}
