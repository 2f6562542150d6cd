import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { normalizeEmail } from './users.ts';

/**
 * Throttling of failed logins per e-mail: the first FREE_FAILURES failures cost nothing;
 * after that each failure locks the e-mail for a doubling delay (30 s, 60 s, ...) capped at
 * 15 minutes. A successful login resets the count. Per-address throttling
 * (@fastify/rate-limit on the token route) covers guessing across many accounts.
 */
export const FREE_FAILURES = 5;
const BASE_LOCK_SECONDS = 30;
const MAX_LOCK_SECONDS = 900;

export function lockSecondsAfter(failures: number): number {
  if (failures < FREE_FAILURES) return 0;
  return Math.min(MAX_LOCK_SECONDS, BASE_LOCK_SECONDS * 2 ** (failures - FREE_FAILURES));
}

/** Seconds until the e-mail may try again, 0 when it may try now. */
export function lockedFor(row: { locked_until: Date | null }, now: Date): number {
  if (row.locked_until === null) return 0;
  return Math.max(0, Math.ceil((row.locked_until.getTime() - now.getTime()) / 1000));
}

/** After this long without a failure, an e-mail's count is forgotten (pruneLoginFailures). */
export const FORGET_AFTER_MS = 24 * 3_600_000;

/**
 * Admit one password attempt for the e-mail typed at login, or answer how long it is
 * locked for. Counted per normalised e-mail whether or not an account has it, so a lock
 * (429) says nothing about which e-mails have accounts. The attempt is counted as a failure
 * *before* the password is checked, under the row's lock, and the lock it would earn is set
 * at once: checking the lock and counting the failure after the (slow) password check let
 * any number of parallel guesses read "not locked" before the first failure was recorded.
 * A correct password then clears the count (recordSuccessfulLogin).
 */
export async function admitLoginAttempt(db: Kysely<Database>, email: string, now: Date): Promise<{ admitted: true } | { admitted: false; retryAfter: number }> {
  const key = normalizeEmail(email);
  return db.transaction().execute(async (trx) => {
    await trx.insertInto('login_failures').values({ email_normalized: key, failed_logins: 0, locked_until: null, updated_at: now }).onConflict((oc) => oc.column('email_normalized').doNothing()).execute();
    const row = await trx.selectFrom('login_failures').select(['failed_logins', 'locked_until']).where('email_normalized', '=', key).forUpdate().executeTakeFirstOrThrow();
    const wait = lockedFor(row, now);
    if (wait > 0) return { admitted: false as const, retryAfter: wait };
    const failures = row.failed_logins + 1;
    const lock = lockSecondsAfter(failures);
    await trx
      .updateTable('login_failures')
      .set({ failed_logins: failures, updated_at: now, ...(lock > 0 ? { locked_until: new Date(now.getTime() + lock * 1000) } : {}) })
      .where('email_normalized', '=', key)
      .execute();
    return { admitted: true as const };
  });
}

/** The password was right (or an admin set a new one): the e-mail starts from zero. */
export async function recordSuccessfulLogin(db: Kysely<Database>, email: string): Promise<void> {
  await db.deleteFrom('login_failures').where('email_normalized', '=', normalizeEmail(email)).execute();
}

/** Housekeeping: counts with no failure for FORGET_AFTER_MS and no lock still running. */
export async function pruneLoginFailures(db: Kysely<Database>, now: Date): Promise<number> {
  const cutoff = new Date(now.getTime() - FORGET_AFTER_MS);
  const res = await db
    .deleteFrom('login_failures')
    .where('updated_at', '<', cutoff)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}
