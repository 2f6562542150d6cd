import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// Failed-login throttling moves from the users row to a table keyed by the normalised
// e-mail typed at login, whether or not an account has it: with the count in the users row
// only real accounts could ever be locked, so six failed logins told anyone which e-mails
// have an account (429 for an account, 400 for none).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE login_failures (
      email_normalized text PRIMARY KEY,
      failed_logins    integer NOT NULL,
      locked_until     timestamptz,
      updated_at       timestamptz NOT NULL
    );

    INSERT INTO login_failures (email_normalized, failed_logins, locked_until, updated_at)
    SELECT email_normalized, failed_logins, locked_until, updated_at FROM users
    WHERE failed_logins > 0 OR locked_until IS NOT NULL;

    ALTER TABLE users DROP COLUMN failed_logins, DROP COLUMN locked_until;
  `.execute(db);
}
