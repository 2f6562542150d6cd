import { randomBytes } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { UsersTable } from '../db/schema.ts';

export type UserRow = Selectable<UsersTable>;

export function newUserId(): string {
  return `usr_${randomBytes(8).toString('hex')}`;
}

/** Accounts are unique per normalised e-mail; logins and throttling count it too. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
