import type { ColumnType, Generated, GeneratedAlways } from 'kysely';

/** Kysely table types of the findings of record (migration 0017; docs/findings-of-record.md). */
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type Json<T = Record<string, unknown>> = ColumnType<T, string, string>;

/** A (client, target) with findings of record (migration 0017). */
export interface FindingTargetsTable {
  client_id: string;
  target: string;
  /** When the triage of the newest stored session was read into records; null: not yet. */
  seeded_at: Date | null;
  last_session_id: string | null;
  last_scanned_at: Date | null;
  last_coverage: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  updated_at: Generated<Date>;
}

/** One finding of record of a client's target (records/). */
export interface FindingRecordsTable {
  id: Generated<string>;
  client_id: string;
  target: string;
  fingerprint: string;
  title: string;
  severity: string | null;
  severity_key: number;
  rule_id: string | null;
  host: string | null;
  port: number | null;
  protocol: string | null;
  cve_ids: ColumnType<string[], string[] | undefined, string[]>;
  kev: boolean;
  epss: number | null;
  status: string;
  status_changed: Date | null;
  status_source: string;
  status_by: string | null;
  prior_status: string | null;
  note: string;
  note_source: string | null;
  note_by: string | null;
  note_at: Date | null;
  exception_reason: string | null;
  exception_approver: string | null;
  exception_approved_at: Date | null;
  /** YYYY-MM-DD, the last valid day (text: days compare as strings, never shift by a time zone). */
  exception_expiry: string | null;
  exception_source: string | null;
  exception_claimed_approver: string | null;
  exception_at: Date | null;
  disposition: string | null;
  disposition_reason: string | null;
  disposition_by: string | null;
  disposition_at: Date | null;
  disposition_source: string | null;
  first_seen: string;
  first_seen_at: Date;
  last_seen: string;
  last_seen_at: Date;
  last_observed_at: Date;
  seen_in: ColumnType<string[], string[] | undefined, string[]>;
  seen_count: number;
  resolved_at: Date | null;
  resolved_in: string | null;
  reopened_at: Date | null;
  not_checked_in: string | null;
  /** YYYY-MM-DD. */
  due_date: string | null;
  /** The last claim per field an uploaded file made that was not applied (records/claims.ts). */
  claims: ColumnType<Record<string, unknown>, string | undefined, string>;
  updated_at: Timestamp;
  /** status <> 'resolved', computed by PostgreSQL: the partial indexes of open records name it (migration 0042). */
  is_open: GeneratedAlways<boolean>;
}

export interface FindingHistoryTable {
  id: Generated<string>;
  client_id: string;
  target: string;
  fingerprint: string;
  at: Timestamp;
  actor: string;
  source: string;
  session_id: string | null;
  field: string;
  from_value: string | null;
  to_value: string | null;
  detail: string | null;
}

export interface RemediationSettingsTable {
  client_id: string;
  due_days: Json;
  updated_by: string;
  updated_at: Generated<Date>;
}

/** How many findings of a session are in each triage state (records/counts). */
export interface SessionTriageCountsTable {
  client_id: string;
  session_id: string;
  /** A finding of the session (what scores), or a record the session resolved. */
  in_scan: boolean;
  status: string;
  false_positive: boolean;
  /** '' no exception in effect, 'never' one without expiry, else its last valid day. */
  exception_expiry: string;
  severity: string;
  score_severity: string;
  n: number;
}

/** A session's findings whose record is open, not a false positive and due on a day (migration 0043). */
export interface SessionDueCountsTable {
  client_id: string;
  session_id: string;
  due_date: string;
  /** As in session_triage_counts. */
  exception_expiry: string;
  n: number;
}
