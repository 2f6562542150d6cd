import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// What only a finding's detail panel shows (evidence, description, references) was one jsonb row
// per finding: on a 10,000-finding upload 10,000 rows, their primary key's entries and the
// parse of each into jsonb, a fifth of what PostgreSQL spent on the upload (bench/README.md,
// "Sessions of many findings"). It is read one finding at a time, so it is stored a page of
// consecutive ordinals per row (sessions/detail-pages.ts, DETAIL_PAGE): a JSON object keyed
// by ordinal, kept as text (the portal wrote it with JSON.stringify; the panel's read parses one
// page) and uncompressed (EXTERNAL), as the one-finding rows were under TOAST's threshold.
//
// session_finding_details stays, empty, for replicas of the earlier version during a rolling
// upgrade: what they index there is still read (findingAt), and deleted with its state row.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE session_finding_detail_pages (
      client_id text NOT NULL,
      session_id text NOT NULL,
      page integer NOT NULL,
      details text NOT NULL,
      PRIMARY KEY (client_id, session_id, page)
    );
    ALTER TABLE session_finding_detail_pages ALTER COLUMN details SET STORAGE EXTERNAL;

    INSERT INTO session_finding_detail_pages (client_id, session_id, page, details)
      SELECT client_id, session_id, ordinal / 100, json_object_agg(ordinal, detail ORDER BY ordinal)::text
      FROM session_finding_details
      GROUP BY client_id, session_id, ordinal / 100;
    DELETE FROM session_finding_details;

    CREATE OR REPLACE FUNCTION session_findings_state_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM session_findings f USING gone g
       WHERE f.client_id = g.client_id AND f.session_id = g.session_id;
      DELETE FROM session_finding_detail_pages d USING gone g
       WHERE d.client_id = g.client_id AND d.session_id = g.session_id;
      DELETE FROM session_finding_details d USING gone g
       WHERE d.client_id = g.client_id AND d.session_id = g.session_id;
      RETURN NULL;
    END $$;
  `.execute(db);
}
