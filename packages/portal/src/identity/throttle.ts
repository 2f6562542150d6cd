import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import type { UserRow } from './users.ts';

/**
 * Account-level throttling of failed logins: the first FREE_FAILURES failures cost
 * nothing; after that each failure locks the account for a doubling delay (30 s, 60 s, ...)
 * capped at 15 minutes. A successful login resets the count. Per-address throttling
 * (@fastify/rate-limit on the token route) covers guessing across many accounts.
 */
export const FREE_FAILURES = 5;
const BASE_LOCK_SECONDS = 30;
const MAX_LOCK_SECONDS = 900;

export function lockSecondsAfter(failures: number): number {
  if (failures < FREE_FAILURES) return 0;
  return Math.min(MAX_LOCK_SECONDS, BASE_LOCK_SECONDS * 2 ** (failures - FREE_FAILURES));
}

/** Seconds until the account may try again, 0 when it may try now. */
export function lockedFor(user: Pick<UserRow, 'locked_until'>, now: Date): number {
  if (user.locked_until === null) return 0;
  return Math.max(0, Math.ceil((user.locked_until.getTime() - now.getTime()) / 1000));
}

/**
 * Admit one password attempt, or answer how long the account is locked for. The attempt
 * is counted as a failure *before* the password is checked, under the row's lock, and the
 * lock it would earn is set at once: checking the lock and counting the failure after the
 * (slow) password check let any number of parallel guesses read "not locked" before the
 * first failure was recorded. A correct password then clears the count (recordSuccessfulLogin).
 */
export async function admitLoginAttempt(db: Kysely<Database>, userId: string, now: Date): Promise<{ admitted: true } | { admitted: false; retryAfter: number }> {
  return db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('users').select(['failed_logins', 'locked_until']).where('id', '=', userId).forUpdate().executeTakeFirst();
    // Deleted meanwhile: nothing to count; the password check fails on its own.
    if (!row) return { admitted: true as const };
    const wait = lockedFor(row, now);
    if (wait > 0) return { admitted: false as const, retryAfter: wait };
    const failures = row.failed_logins + 1;
    const lock = lockSecondsAfter(failures);
    await trx
      .updateTable('users')
      .set({ failed_logins: failures, ...(lock > 0 ? { locked_until: new Date(now.getTime() + lock * 1000) } : {}) })
      .where('id', '=', userId)
      .execute();
    return { admitted: true as const };
  });
}

/** The password was right: the attempt admitted by admitLoginAttempt was not a failure after all. */
export async function recordSuccessfulLogin(db: Kysely<Database>, userId: string): Promise<void> {
  await db.updateTable('users').set({ failed_logins: 0, locked_until: null }).where('id', '=', userId).execute();
}
