import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// Findings of record (docs/findings-of-record.md). The decisions people make on a
// finding (status, note, risk exception, false-positive disposition) move out of the uploaded
// files into one record per finding of a client's target, which every upload is merged into
// and which outlives the sessions (retention, re-uploads). Sessions stay the evidence.
// - finding_targets: one row per (client, target) that has records; `seeded_at` is set once the
//   triage of the target's newest stored session was read into records (records/seed.ts: the
//   blob store is not reachable from a migration, so that happens at start and on first use).
// - finding_records: the record; exception_* are set only for an exception in effect (a claim
//   an uploaded file made without the authority to set it is in the history only).
//   `claims` keeps the last claim per field that was not applied, so a file repeating it
//   adds no history line per scan.
// - finding_history: who changed what, when, from what, to what, and with which session.
// - remediation_settings: due days per severity of a client (defaults in the protocol).
// - session_findings: every row now carries the record key (fingerprint, else one made of the
//   title and host), the severity it scores as, whether it is a finding of the session
//   (in_scan) or a record the session resolved or did not check, and what the session did to
//   it (change). Rows built before carry no record key: the state rows are removed so that each
//   session is indexed again from its stored file (at start, in the background, or on its first
//   read).
// - session_triage_counts: per session, how many of its findings are in each triage state,
//   kept in step with the records, so listings state the scores and summaries of the current
//   triage without reading any file.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE finding_targets (
      client_id text NOT NULL,
      target text NOT NULL,
      seeded_at timestamptz,
      last_session_id text,
      last_scanned_at timestamptz,
      last_coverage jsonb,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (client_id, target)
    );

    CREATE TABLE finding_records (
      id bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      client_id text NOT NULL,
      target text NOT NULL,
      fingerprint text NOT NULL,
      title text NOT NULL,
      severity text,
      severity_key smallint NOT NULL,
      rule_id text,
      host text,
      port integer,
      protocol text,
      cve_ids text[] NOT NULL DEFAULT '{}',
      kev boolean NOT NULL DEFAULT false,
      epss double precision,
      status text NOT NULL,
      status_changed timestamptz,
      status_source text NOT NULL,
      status_by text,
      prior_status text,
      note text NOT NULL DEFAULT '',
      note_source text,
      note_by text,
      note_at timestamptz,
      exception_reason text,
      exception_approver text,
      exception_approved_at timestamptz,
      exception_expiry text,
      exception_source text,
      exception_claimed_approver text,
      exception_at timestamptz,
      disposition text,
      disposition_reason text,
      disposition_by text,
      disposition_at timestamptz,
      disposition_source text,
      first_seen text NOT NULL,
      first_seen_at timestamptz NOT NULL,
      last_seen text NOT NULL,
      last_seen_at timestamptz NOT NULL,
      last_observed_at timestamptz NOT NULL,
      seen_in text[] NOT NULL DEFAULT '{}',
      seen_count integer NOT NULL DEFAULT 0,
      resolved_at timestamptz,
      resolved_in text,
      reopened_at timestamptz,
      not_checked_in text,
      due_date text,
      claims jsonb NOT NULL DEFAULT '{}'::jsonb,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (client_id, target, fingerprint),
      FOREIGN KEY (client_id, target) REFERENCES finding_targets (client_id, target) ON DELETE CASCADE
    );
    -- The portfolio's order (most severe first, then the longest known) across every client and within one.
    CREATE INDEX finding_records_order_idx ON finding_records (severity_key DESC, first_seen_at, id);
    CREATE INDEX finding_records_client_order_idx ON finding_records (client_id, severity_key DESC, first_seen_at, id);
    CREATE INDEX finding_records_target_order_idx ON finding_records (target, severity_key DESC, first_seen_at, id);
    CREATE INDEX finding_records_exception_order_idx ON finding_records (severity_key DESC, first_seen_at, id)
      WHERE exception_reason IS NOT NULL;
    -- A host exactly or by prefix, within one client and across the portfolio.
    CREATE INDEX finding_records_host_idx ON finding_records (client_id, host text_pattern_ops);
    CREATE INDEX finding_records_host_any_idx ON finding_records (host text_pattern_ops);
    CREATE INDEX finding_records_open_due_idx ON finding_records (due_date)
      WHERE status <> 'resolved' AND disposition IS NULL;
    CREATE INDEX finding_records_kev_idx ON finding_records (client_id) WHERE kev;

    CREATE TABLE finding_history (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      client_id text NOT NULL,
      target text NOT NULL,
      fingerprint text NOT NULL,
      at timestamptz NOT NULL,
      actor text NOT NULL,
      source text NOT NULL,
      session_id text,
      field text NOT NULL,
      from_value text,
      to_value text,
      detail text,
      FOREIGN KEY (client_id, target, fingerprint)
        REFERENCES finding_records (client_id, target, fingerprint) ON DELETE CASCADE
    );
    CREATE INDEX finding_history_record_idx ON finding_history (client_id, target, fingerprint, id);

    CREATE TABLE remediation_settings (
      client_id text PRIMARY KEY,
      due_days jsonb NOT NULL,
      updated_by text NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    ALTER TABLE session_findings
      ADD COLUMN in_scan boolean NOT NULL DEFAULT true,
      ADD COLUMN change text,
      ADD COLUMN score_severity text;
    CREATE INDEX session_findings_record_idx ON session_findings (client_id, fingerprint);

    CREATE TABLE session_triage_counts (
      client_id text NOT NULL,
      session_id text NOT NULL,
      in_scan boolean NOT NULL,
      status text NOT NULL,
      false_positive boolean NOT NULL,
      exception_expiry text NOT NULL,
      severity text NOT NULL,
      score_severity text NOT NULL,
      n integer NOT NULL,
      PRIMARY KEY (client_id, session_id, in_scan, status, false_positive, exception_expiry, severity, score_severity),
      FOREIGN KEY (client_id, session_id) REFERENCES session_findings_state (client_id, session_id) ON DELETE CASCADE
    );

    DELETE FROM session_findings_state;
  `.execute(db);
}
