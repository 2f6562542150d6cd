import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// Identity hardening:
// - token_families: one row per login; refresh tokens rotate within it, access tokens carry
//   its id (`sid`), so revoking the family (reuse of a rotated token, password change) ends
//   its access tokens too, and `started_at` bounds the family's absolute lifetime.
// - users.tokens_valid_after: a password change's cutoff for access tokens without `sid`
//   (issued before this migration).
// - login_failures is keyed by (e-mail, client address), so failures from one address no
//   longer lock the right password out from every other; login_email_failures is the
//   per-e-mail count across addresses, which only slows logins down.
// - identity_signing_keys.private_jwk_encrypted: the private key, AES-256-GCM under a key
//   from outside the database; the clear column is emptied at start-up.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE users ADD COLUMN tokens_valid_after timestamptz;

    CREATE TABLE token_families (
      id         text PRIMARY KEY,
      user_id    text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      started_at timestamptz NOT NULL,
      revoked_at timestamptz
    );
    CREATE INDEX token_families_user_idx ON token_families (user_id);
    INSERT INTO token_families (id, user_id, started_at, revoked_at)
    SELECT family_id, min(user_id), min(created_at), CASE WHEN bool_and(revoked_at IS NOT NULL) THEN max(revoked_at) END
    FROM refresh_tokens GROUP BY family_id;

    ALTER TABLE login_failures ADD COLUMN address text NOT NULL DEFAULT '';
    ALTER TABLE login_failures DROP CONSTRAINT login_failures_pkey;
    ALTER TABLE login_failures ADD PRIMARY KEY (email_normalized, address);
    ALTER TABLE login_failures ALTER COLUMN address DROP DEFAULT;

    CREATE TABLE login_email_failures (
      email_normalized text PRIMARY KEY,
      failed_logins    integer NOT NULL,
      updated_at       timestamptz NOT NULL
    );

    ALTER TABLE identity_signing_keys ADD COLUMN private_jwk_encrypted text;
    ALTER TABLE identity_signing_keys ALTER COLUMN private_jwk DROP NOT NULL;
  `.execute(db);
}
