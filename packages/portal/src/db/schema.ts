import type { ColumnType, Generated } from 'kysely';
import type { DeliveryAttempt, OpenFinding, SessionMetadata } from '@svc/protocol';
import type {
  FindingHistoryTable,
  FindingRecordsTable,
  FindingTargetsTable,
  RemediationSettingsTable,
  SessionDueCountsTable,
  SessionTriageCountsTable,
} from './schema-records.ts';
import type {
  AgentCommandResultsTable,
  AgentCommandsTable,
  AgentGroupsTable,
  AgentScheduleRevisionsTable,
  AgentSchedulesTable,
  AgentsTable,
} from './schema-agents.ts';

/** Kysely table types. Timestamps read as Date; bigint counters read as strings (pg's default). */
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type Json<T = Record<string, unknown>> = ColumnType<T, string, string>;

export interface UsersTable {
  id: string;
  email: string;
  email_normalized: string;
  password_hash: string;
  role: 'admin' | 'member';
  client_ids: ColumnType<string[], string[] | undefined, string[]>;
  created_at: Generated<Date>;
  updated_at: Timestamp;
  /** A password change's cutoff for access tokens without a family id (migration 0010). */
  tokens_valid_after: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface RefreshTokensTable {
  token_hash: string;
  user_id: string;
  family_id: string;
  expires_at: Timestamp;
  used_at: Date | null;
  revoked_at: Date | null;
  created_at: Generated<Date>;
}

export interface TokenFamiliesTable {
  id: string;
  user_id: string;
  started_at: Timestamp;
  revoked_at: Date | null;
}

export interface IdentitySigningKeysTable {
  kid: string;
  /** Emptied at start-up once private_jwk_encrypted holds the key (migration 0010). */
  private_jwk: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  private_jwk_encrypted: ColumnType<string | null, string | null | undefined, string | null>;
  public_jwk: Json;
  created_at: Generated<Date>;
}

export interface LicensesTable {
  id: string;
  key_prefix: string;
  key_hash: string;
  tier: 'professional' | 'business' | 'msp';
  client_id: string;
  name: string;
  description: string | null;
  max_sessions: number | null;
  max_agents: number | null;
  expires_at: Date | null;
  is_active: Generated<boolean>;
  revoked_at: Date | null;
  created_by: string | null;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

export interface AuditEventsTable {
  id: Generated<string>;
  event_type: string;
  session_id: string | null;
  client_id: string | null;
  actor: string;
  data: Json;
  created_at: Generated<Date>;
}

export interface StoredObject {
  key: string;
  size: number;
  sha256: string;
  content_type: string;
}

export interface SessionsTable {
  session_id: string;
  /** Part of the key with session_id (docs/api.md#ids-are-per-client); '' for sessions uploaded without a client. */
  client_id: string;
  client: string | null;
  target: string | null;
  status: Generated<'new' | 'in_review' | 'resolved' | 'archived'>;
  risk_score: number | null;
  risk_grade: string | null;
  /** The derived SessionMetadata (protocol). */
  metadata: Json<SessionMetadata>;
  /** Stored file name to blob object. */
  files: Json<Record<string, StoredObject>>;
  license_id: string | null;
  version: Generated<number>;
  uploaded_at: Timestamp;
  /** The first upload of this id (a re-upload renews uploaded_at only); set by a trigger when omitted. */
  first_uploaded_at: Timestamp;
  updated_at: Timestamp;
  expires_at: Timestamp;
  expiry_notified_at: Date | null;
  /** When the scan ran (the file's finished_at, else started_at, else the upload time). */
  scanned_at: Timestamp;
  /** The file's open remediation entries by title (sessions/scan-facts.ts). */
  open_findings: ColumnType<OpenFinding[], string | undefined, string>;
  /** The scan run the stored file is (metadata.run_id, migration 0028); null when it names none. */
  run_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface ShareTokensTable {
  /** Clear: only rows written before migration 0020, until the portal's next start seals them. */
  token: string | null;
  /** SHA-256 (hex) of the token: what a presented token is looked up by (sessions/share-seal.ts). */
  token_hash: string;
  /** The token sealed under the key-encryption key, to show the link again; null only beside a clear token. */
  token_sealed: string | null;
  client_id: string;
  session_id: string;
  created_at: Generated<Date>;
}

export interface StatusHistoryTable {
  id: Generated<string>;
  client_id: string;
  session_id: string;
  from_status: string | null;
  to_status: string;
  changed_by: string;
  note: string | null;
  changed_at: Generated<Date>;
}

export interface SessionNotesTable {
  id: Generated<string>;
  client_id: string;
  session_id: string;
  author: string;
  note: string;
  created_at: Generated<Date>;
}

export interface WebhookSubscriptionsTable {
  id: string;
  url: string;
  event_types: ColumnType<string[], string[], string[]>;
  /** Only in rows an older version wrote, until the next start encrypts it (webhooks/secrets.ts). */
  signing_secret: string | null;
  /** `v1.<iv>.<ciphertext + tag>` under the key-encryption key, the subscription id as authenticated data. */
  signing_secret_encrypted: string | null;
  enabled: Generated<boolean>;
  description: string | null;
  client_id: string | null;
  created_by: string;
  created_at: Generated<Date>;
  updated_at: Timestamp;
  consecutive_failures: Generated<number>;
  disabled_reason: string | null;
}

export interface WebhookDeliveriesTable {
  id: Generated<string>;
  subscription_id: string;
  event_id: string;
  event_type: string;
  body: string;
  status: Generated<'pending' | 'succeeded' | 'failed' | 'abandoned'>;
  redelivery_of: string | null;
  /** The client of the delivered event (not the subscription's, which can change): who may see it. */
  client_id: string | null;
  created_at: Generated<Date>;
  /** In the API's shape (`DeliveryAttempt`), oldest first; empty while pending. */
  attempts: ColumnType<DeliveryAttempt[], string | undefined, string>;
  /** Times it was started: 1, plus one per takeover after a lease expired (migration 0019). */
  runs: Generated<number>;
  /** The body as sent, sealed, when `body` has a secret redacted (migration 0036); otherwise null. */
  body_sealed: ColumnType<string | null, string | null | undefined, string | null>;
}

/** Webhook events staged by their operation's transaction, until one fan-out claims them (migration 0036). */
export interface WebhookOutboxTable {
  id: Generated<string>;
  /** The audited event; null for one that is not audited, then in `event`. */
  audit_id: string | null;
  event: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  created_at: Generated<Date>;
}

/** A delivery in flight: the process sending it renews the lease; an expired one is taken over. */
export interface WebhookDeliveryLeasesTable {
  delivery_id: string;
  claimed_by: string;
  claimed_until: Date;
}

/** Failed logins per e-mail typed at login, whether or not an account has it. */
export interface LoginFailuresTable {
  email_normalized: string;
  address: string;
  failed_logins: number;
  locked_until: Date | null;
  updated_at: Timestamp;
}

export interface LoginEmailFailuresTable {
  email_normalized: string;
  failed_logins: number;
  updated_at: Timestamp;
}

/** Bytes of stored session files per client, kept by a trigger on sessions (migration 0012). */
export interface StorageUsageTable {
  client_id: string;
  bytes: ColumnType<string, string | number, string | number>;
}

/** Sessions per client and status, kept by a trigger on sessions (migration 0029); rows may hold 0. */
export interface SessionCountsTable {
  client_id: string;
  status: string;
  n: ColumnType<string, string | number, string | number>;
}

/** Each target's newest scored session, kept by a trigger on sessions (migration 0035). */
export interface TargetLatestRiskTable {
  client_id: string;
  target: string | null;
  session_id: string;
  scanned_at: Date;
  risk_score: number;
}

/** Which stored session file a session's findings index was built from (migration 0013). */
export interface SessionFindingsStateTable {
  client_id: string;
  session_id: string;
  file_key: string;
  total: number;
  topology: Json | null;
  orc_964: Json | null;
  indexed_at: Generated<Date>;
  /** The file whose rows session_due_counts counts (migration 0043); null: not counted yet. */
  due_counted_key: ColumnType<string | null, string | null | undefined, string | null>;
  /** Rows by what the upload did to them, counted with the due counts (migration 0043). */
  change_counts: ColumnType<Record<string, number> | null, string | null | undefined, string | null>;
}

/** One finding of a session, as the findings endpoint filters, sorts and shows it (sessions/findings-index.ts). */
export interface SessionFindingsTable {
  client_id: string;
  session_id: string;
  ordinal: number;
  fingerprint: string | null;
  title: string;
  severity: string | null;
  severity_key: number;
  cvss: number | null;
  cvss_key: number;
  cve_ids: string[];
  cve_key: string;
  host: string | null;
  hostname: string | null;
  host_key: string;
  port: number | null;
  port_key: number;
  protocol: string | null;
  status: string | null;
  status_key: number;
  tracked_by: string | null;
  first_seen: string | null;
  first_seen_key: string;
  status_changed: string | null;
  note: string;
  exception_status: string | null;
  exception_expired: boolean;
  exception_reason: string | null;
  exception_approver: string | null;
  exception_approved_at: string | null;
  exception_expiry: string | null;
  search: string;
  /** Prioritisation from the vulnerability index (migration 0016). */
  kev: Generated<boolean>;
  kev_date_added: string | null;
  epss: number | null;
  epss_percentile: number | null;
  /** Findings of record (migration 0017): a finding of the session, or a record it resolved or did not check. */
  in_scan: Generated<boolean>;
  /** What the session did to the finding's record: new, persistent, reopened, resolved, not_checked; null: unknown. */
  change: string | null;
  /** The severity the finding scores as (KEV and EPSS raise it). */
  score_severity: string | null;
}

/** Written by portals before migration 0040 only (read as a fallback). */
export interface SessionFindingDetailsTable {
  client_id: string;
  session_id: string;
  ordinal: number;
  detail: Json;
}

/** The details of DETAIL_PAGE consecutive ordinals, a JSON object keyed by ordinal (migration 0040). */
export interface SessionFindingDetailPagesTable {
  client_id: string;
  session_id: string;
  page: number;
  details: string;
}

/** A findings index written beside its upload's transaction and not yet published (migration 0041). */
export interface SessionIndexPendingTable {
  client_id: string;
  session_id: string;
  written_at: Generated<Date>;
}

export type {
  AgentCommandResultsTable,
  AgentCommandsTable,
  AgentGroupsTable,
  AgentScheduleRevisionsTable,
  AgentSchedulesTable,
  AgentsTable,
  FindingHistoryTable,
  FindingRecordsTable,
  FindingTargetsTable,
  RemediationSettingsTable,
  SessionDueCountsTable,
  SessionTriageCountsTable,
};

export interface Database {
  users: UsersTable;
  login_failures: LoginFailuresTable;
  login_email_failures: LoginEmailFailuresTable;
  token_families: TokenFamiliesTable;
  refresh_tokens: RefreshTokensTable;
  identity_signing_keys: IdentitySigningKeysTable;
  licenses: LicensesTable;
  audit_events: AuditEventsTable;
  sessions: SessionsTable;
  share_tokens: ShareTokensTable;
  status_history: StatusHistoryTable;
  session_notes: SessionNotesTable;
  agents: AgentsTable;
  agent_commands: AgentCommandsTable;
  agent_command_results: AgentCommandResultsTable;
  agent_groups: AgentGroupsTable;
  agent_schedules: AgentSchedulesTable;
  agent_schedule_revisions: AgentScheduleRevisionsTable;
  webhook_subscriptions: WebhookSubscriptionsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_delivery_leases: WebhookDeliveryLeasesTable;
  webhook_outbox: WebhookOutboxTable;
  storage_usage: StorageUsageTable;
  session_counts: SessionCountsTable;
  target_latest_risk: TargetLatestRiskTable;
  session_findings_state: SessionFindingsStateTable;
  session_findings: SessionFindingsTable;
  session_finding_details: SessionFindingDetailsTable;
  session_finding_detail_pages: SessionFindingDetailPagesTable;
  session_index_pending: SessionIndexPendingTable;
  finding_targets: FindingTargetsTable;
  finding_records: FindingRecordsTable;
  finding_history: FindingHistoryTable;
  remediation_settings: RemediationSettingsTable;
  session_triage_counts: SessionTriageCountsTable;
  session_due_counts: SessionDueCountsTable;
}
