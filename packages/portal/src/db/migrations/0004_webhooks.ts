import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE webhook_subscriptions (
      id                   text PRIMARY KEY,
      url                  text NOT NULL,
      event_types          text[] NOT NULL,
      -- The HMAC key must be usable to sign, so it is stored as is; it never leaves the
      -- portal except in the creation response.
      signing_secret       text NOT NULL,
      enabled              boolean NOT NULL DEFAULT true,
      description          text,
      client_id            text,
      created_by           text NOT NULL,
      created_at           timestamptz NOT NULL DEFAULT now(),
      updated_at           timestamptz NOT NULL DEFAULT now(),
      consecutive_failures integer NOT NULL DEFAULT 0,
      disabled_reason      text
    );
    CREATE INDEX webhook_subscriptions_enabled_idx ON webhook_subscriptions USING gin (event_types) WHERE enabled;

    -- One row per event per subscription ("webhooks" in db-health), with its attempts.
    CREATE TABLE webhook_deliveries (
      id              bigserial PRIMARY KEY,
      subscription_id text NOT NULL REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
      event_id        text NOT NULL,
      event_type      text NOT NULL,
      body            text NOT NULL,
      status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
      redelivery_of   bigint,
      created_at      timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX webhook_deliveries_subscription_idx ON webhook_deliveries (subscription_id, id DESC);

    CREATE TABLE webhook_delivery_attempts (
      delivery_id  bigint NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
      attempt      integer NOT NULL,
      status_code  integer,
      duration_ms  integer NOT NULL,
      error        text,
      attempted_at timestamptz NOT NULL,
      PRIMARY KEY (delivery_id, attempt)
    );
  `.execute(db);
}
