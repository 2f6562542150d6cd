import type { ColumnType, Generated } from 'kysely';

/** Kysely table types of the agents area: agents, their commands and results, groups, schedules. */
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type Json<T = Record<string, unknown>> = ColumnType<T, string, string>;

export interface AgentsTable {
  agent_id: string;
  /** Part of the key (client_id, agent_id); '' is the legacy key's unnamed namespace. */
  client_id: string;
  /** The license that registered the agent; null: the legacy key did. */
  license_id: string | null;
  key_tier: 'professional' | 'business' | 'msp';
  version: string;
  sent_at: Timestamp;
  status: string;
  uptime_seconds: number;
  schedules: ColumnType<unknown[] | null, string | null, string | null>;
  system_info: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  received_at: Timestamp;
  first_seen_at: Timestamp;
  deregistered_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface AgentCommandsTable {
  id: Generated<string>;
  client_id: string;
  agent_id: string;
  command_type: string;
  payload: Json;
  priority: number;
  created_by: string;
  group_target: string | null;
  status: Generated<'pending' | 'sent' | 'acked' | 'completed' | 'failed'>;
  created_at: Generated<Date>;
  sent_at: Date | null;
  acked_at: Date | null;
  completed_at: Date | null;
  /** The latest progress report (migration 0023): all three null until one came. */
  progress_task: string | null;
  progress_percent: number | null;
  progress_at: Date | null;
  /** Migration 0025: set by the portal at queue time (the default is the database's safety net only). */
  expires_at: Generated<Date>;
  /** A cancellation asked of the agent running the command: at and by together, reason optional. */
  cancel_requested_at: Date | null;
  cancel_requested_by: string | null;
  cancel_reason: string | null;
  /** The pipeline's stage the latest report named (migration 0027); null when it named none. */
  progress_stage: string | null;
}

export interface AgentCommandResultsTable {
  command_id: string;
  exit_code: number | null;
  stdout: string;
  stderr: string;
  session_id: string | null;
  completed_at: Timestamp;
}

export interface AgentGroupsTable {
  client_id: string;
  group_name: string;
  agent_id: string;
  created_at: Generated<Date>;
}

/** Scan schedules kept by the portal (migration 0026): one agent or one group of a client. */
export interface AgentSchedulesTable {
  id: string;
  client_id: string;
  agent_id: string | null;
  group_name: string | null;
  name: string;
  description: string | null;
  targets: string;
  ports: string | null;
  profile: string | null;
  cron: string;
  timezone: string;
  upload: boolean;
  enabled: boolean;
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

/** A client's schedules revision, bumped by triggers on agent_schedules and agent_groups. */
export interface AgentScheduleRevisionsTable {
  client_id: string;
  revision: ColumnType<string, string | number, string | number>;
}
