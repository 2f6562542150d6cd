import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import {
  countEmailFailure,
  deleteEmailFailures,
  deleteLoginFailuresEverywhere,
  deleteLoginFailuresFrom,
  deleteStaleLoginFailures,
  lockLoginFailures,
  setLoginFailures,
} from './queries.ts';
import { normalizeEmail } from './users.ts';

/**
 * Throttling of failed logins per (e-mail, client address): the first FREE_FAILURES
 * failures cost nothing; after that each failure locks that e-mail *from that address* for
 * a doubling delay (30 s, 60 s, ...) capped at 15 minutes. Locking the e-mail everywhere let
 * anyone keep its owner out with one wrong password every 15 minutes. Across addresses a
 * per-e-mail count (login_email_failures) past a threshold only slows each attempt down
 * (the password grant waits before checking the password), so the right password from a fresh
 * address still works. A successful login resets both counts. Per-address throttling
 * (@fastify/rate-limit on the token route) covers guessing across many accounts.
 */
export const FREE_FAILURES = 5;
const BASE_LOCK_SECONDS = 30;
const MAX_LOCK_SECONDS = 900;

export function lockSecondsAfter(failures: number): number {
  if (failures < FREE_FAILURES) return 0;
  return Math.min(MAX_LOCK_SECONDS, BASE_LOCK_SECONDS * 2 ** (failures - FREE_FAILURES));
}

/** Seconds until the e-mail may try again from that address, 0 when it may try now. */
export function lockedFor(row: { locked_until: Date | null }, now: Date): number {
  if (row.locked_until === null) return 0;
  return Math.max(0, Math.ceil((row.locked_until.getTime() - now.getTime()) / 1000));
}

/** After this long without a failure, a count is forgotten (pruneLoginFailures). */
export const FORGET_AFTER_MS = 24 * 3_600_000;

export type LoginGate = { admitted: true; slow: boolean } | { admitted: false; retryAfter: number };

/**
 * Admit one password attempt for the e-mail typed at login from `address`, or answer how
 * long it is locked for there. Counted per normalised e-mail whether or not an account has
 * it, so a lock (429) or a slow answer says nothing about which e-mails have accounts. The
 * attempt is counted as a failure *before* the password is checked, under the row's lock,
 * and the lock it would earn is set at once: checking the lock and counting the failure
 * after the (slow) password check let any number of parallel guesses read "not locked"
 * before the first failure was recorded. A correct password then clears the counts
 * (recordSuccessfulLogin). `slow`: the e-mail had `slowAfter` failures across addresses.
 */
export async function admitLoginAttempt(
  db: Kysely<Database>,
  email: string,
  address: string,
  now: Date,
  slowAfter: number,
): Promise<LoginGate> {
  const key = normalizeEmail(email);
  return db.transaction().execute(async (trx) => {
    const row = await lockLoginFailures(trx, key, address, now);
    const wait = lockedFor(row, now);
    if (wait > 0) return { admitted: false as const, retryAfter: wait };
    const failures = row.failed_logins + 1;
    const lock = lockSecondsAfter(failures);
    await setLoginFailures(trx, key, address, failures, lock > 0 ? new Date(now.getTime() + lock * 1000) : null, now);
    const across = await countEmailFailure(trx, key, now);
    // This attempt is already counted: slowed once `slowAfter` earlier attempts failed.
    return { admitted: true as const, slow: across > slowAfter };
  });
}

/** The password was right: the e-mail starts from zero from this address and across addresses. */
export async function recordSuccessfulLogin(db: Kysely<Database>, email: string, address: string): Promise<void> {
  const key = normalizeEmail(email);
  await deleteLoginFailuresFrom(db, key, address);
  await deleteEmailFailures(db, key);
}

/** An admin set a new password: every count of the e-mail goes. */
export async function clearLoginFailures(db: Kysely<Database>, emailNormalized: string): Promise<void> {
  await deleteLoginFailuresEverywhere(db, emailNormalized);
  await deleteEmailFailures(db, emailNormalized);
}

/** Housekeeping: counts with no failure for FORGET_AFTER_MS and no lock still running. */
export function pruneLoginFailures(db: Kysely<Database>, now: Date): Promise<number> {
  return deleteStaleLoginFailures(db, new Date(now.getTime() - FORGET_AFTER_MS), now);
}
