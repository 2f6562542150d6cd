import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// Findings served a page at a time. session_findings holds one row per finding of
// a session, built from its stored session_results.json (sessions/findings-index.ts);
// session_finding_details what only the detail panel shows; session_findings_state records which stored file (blob key) the rows were built from, so a
// session whose file changed without its rows (sessions stored before this migration) is
// indexed again on its first findings request. Both cascade with the session, so deletion
// and the retention sweep need nothing more. Sort keys are NOT NULL so that keyset paging
// compares plain values; each sortable column has an index led by the session.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE session_findings_state (
      client_id text NOT NULL,
      session_id text NOT NULL,
      file_key text NOT NULL,
      total integer NOT NULL,
      topology jsonb,
      orc_964 jsonb,
      indexed_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (client_id, session_id),
      FOREIGN KEY (client_id, session_id) REFERENCES sessions (client_id, session_id) ON DELETE CASCADE
    );

    CREATE TABLE session_findings (
      client_id text NOT NULL,
      session_id text NOT NULL,
      ordinal integer NOT NULL,
      fingerprint text,
      title text NOT NULL,
      severity text,
      severity_key smallint NOT NULL,
      cvss real,
      cvss_key smallint NOT NULL,
      cve_ids text[] NOT NULL,
      cve_key text NOT NULL,
      host text,
      hostname text,
      host_key text NOT NULL,
      port integer,
      port_key integer NOT NULL,
      protocol text,
      status text,
      status_key smallint NOT NULL,
      tracked_by text,
      first_seen text,
      first_seen_key text NOT NULL,
      status_changed text,
      note text NOT NULL,
      exception_status text,
      exception_expired boolean NOT NULL,
      exception_reason text,
      exception_approver text,
      exception_approved_at text,
      exception_expiry text,
      search text NOT NULL,
      PRIMARY KEY (client_id, session_id, ordinal),
      FOREIGN KEY (client_id, session_id) REFERENCES session_findings_state (client_id, session_id) ON DELETE CASCADE
    );
    -- What only the detail panel shows (evidence, description, references) lives apart, so
    -- that the rows every page filters and counts stay narrow.
    CREATE TABLE session_finding_details (
      client_id text NOT NULL,
      session_id text NOT NULL,
      ordinal integer NOT NULL,
      detail jsonb NOT NULL,
      PRIMARY KEY (client_id, session_id, ordinal),
      FOREIGN KEY (client_id, session_id) REFERENCES session_findings_state (client_id, session_id) ON DELETE CASCADE
    );
    CREATE INDEX session_findings_severity_idx ON session_findings (client_id, session_id, severity_key, ordinal);
    CREATE INDEX session_findings_host_idx ON session_findings (client_id, session_id, host_key, ordinal);
    CREATE INDEX session_findings_port_idx ON session_findings (client_id, session_id, port_key, ordinal);
    CREATE INDEX session_findings_cve_idx ON session_findings (client_id, session_id, cve_key, ordinal);
    CREATE INDEX session_findings_cvss_idx ON session_findings (client_id, session_id, cvss_key, ordinal);
    CREATE INDEX session_findings_status_idx ON session_findings (client_id, session_id, status_key, ordinal);
    CREATE INDEX session_findings_first_seen_idx ON session_findings (client_id, session_id, first_seen_key, ordinal);
    CREATE INDEX session_findings_fingerprint_idx ON session_findings (client_id, session_id, fingerprint);
  `.execute(db);
}
