import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE users (
      id               text PRIMARY KEY,
      email            text NOT NULL,
      email_normalized text NOT NULL UNIQUE,
      password_hash    text NOT NULL,
      role             text NOT NULL CHECK (role IN ('admin', 'member')),
      client_ids       text[] NOT NULL DEFAULT '{}',
      failed_logins    integer NOT NULL DEFAULT 0,
      locked_until     timestamptz,
      created_at       timestamptz NOT NULL DEFAULT now(),
      updated_at       timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE refresh_tokens (
      token_hash text PRIMARY KEY,
      user_id    text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      family_id  text NOT NULL,
      expires_at timestamptz NOT NULL,
      used_at    timestamptz,
      revoked_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX refresh_tokens_family_idx ON refresh_tokens (family_id);
    CREATE INDEX refresh_tokens_user_idx ON refresh_tokens (user_id);

    CREATE TABLE identity_signing_keys (
      kid         text PRIMARY KEY,
      private_jwk jsonb NOT NULL,
      public_jwk  jsonb NOT NULL,
      created_at  timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE licenses (
      id           text PRIMARY KEY,
      key_prefix   text NOT NULL,
      key_hash     text NOT NULL UNIQUE,
      tier         text NOT NULL CHECK (tier IN ('professional', 'business', 'msp')),
      client_id    text NOT NULL,
      name         text NOT NULL,
      description  text,
      max_sessions integer CHECK (max_sessions IS NULL OR max_sessions > 0),
      max_agents   integer CHECK (max_agents IS NULL OR max_agents > 0),
      expires_at   timestamptz,
      is_active    boolean NOT NULL DEFAULT true,
      revoked_at   timestamptz,
      created_by   text,
      created_at   timestamptz NOT NULL DEFAULT now(),
      updated_at   timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX licenses_key_prefix_idx ON licenses (key_prefix);
    CREATE INDEX licenses_client_id_idx ON licenses (client_id);

    CREATE TABLE audit_events (
      id         bigserial PRIMARY KEY,
      event_type text NOT NULL,
      session_id text,
      client_id  text,
      actor      text NOT NULL,
      data       jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX audit_events_created_idx ON audit_events (created_at);
    CREATE INDEX audit_events_client_created_idx ON audit_events (client_id, created_at);
    CREATE INDEX audit_events_session_idx ON audit_events (session_id) WHERE session_id IS NOT NULL;
  `.execute(db);
}
