import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// Webhook signing secrets are stored encrypted (AES-256-GCM under the identity
// provider's key-encryption key, which is not in the database). The key is not known here:
// the portal's start encrypts every clear secret and empties signing_secret
// (webhooks/secrets.ts), and reads a clear one until then.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE webhook_subscriptions ADD COLUMN signing_secret_encrypted text;
    ALTER TABLE webhook_subscriptions ALTER COLUMN signing_secret DROP NOT NULL;
    ALTER TABLE webhook_subscriptions ADD CONSTRAINT webhook_subscriptions_secret_present
      CHECK (signing_secret IS NOT NULL OR signing_secret_encrypted IS NOT NULL);
  `.execute(db);
}
