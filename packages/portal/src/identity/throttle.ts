import { sql, type Kysely } from 'kysely';
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
export function lockedFor(user: UserRow, now: Date): number {
  if (user.locked_until === null) return 0;
  return Math.max(0, Math.ceil((user.locked_until.getTime() - now.getTime()) / 1000));
}

export async function recordFailedLogin(db: Kysely<Database>, userId: string, now: Date): Promise<void> {
  // Increment in SQL so concurrent failures all count.
  const row = await db
    .updateTable('users')
    .set({ failed_logins: sql`failed_logins + 1` })
    .where('id', '=', userId)
    .returning('failed_logins')
    .executeTakeFirst();
  const lock = row ? lockSecondsAfter(row.failed_logins) : 0;
  if (lock > 0) await db.updateTable('users').set({ locked_until: new Date(now.getTime() + lock * 1000) }).where('id', '=', userId).execute();
}

export async function recordSuccessfulLogin(db: Kysely<Database>, user: UserRow): Promise<void> {
  if (user.failed_logins === 0 && user.locked_until === null) return;
  await db.updateTable('users').set({ failed_logins: 0, locked_until: null }).where('id', '=', user.id).execute();
}
