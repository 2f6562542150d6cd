import type { ColumnType, Generated } from 'kysely';

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
  failed_logins: Generated<number>;
  locked_until: Date | null;
  created_at: Generated<Date>;
  updated_at: Timestamp;
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

export interface IdentitySigningKeysTable {
  kid: string;
  private_jwk: Json;
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

export interface Database {
  users: UsersTable;
  refresh_tokens: RefreshTokensTable;
  identity_signing_keys: IdentitySigningKeysTable;
  licenses: LicensesTable;
  audit_events: AuditEventsTable;
}
