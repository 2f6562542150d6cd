import { randomBytes } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { AppContext } from '../context.ts';
import type { UsersTable } from '../db/schema.ts';
import { findUserById } from './queries.ts';

export type UserRow = Selectable<UsersTable>;

export function newUserId(): string {
  return `usr_${randomBytes(8).toString('hex')}`;
}

/** Accounts are unique per normalised e-mail; logins and throttling count it too. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** The account an access token of ours belongs to; undefined for a bad token or a deleted user. */
export async function accountOfToken(ctx: AppContext, token: string): Promise<UserRow | undefined> {
  const payload = await ctx.tokens.verify(token);
  return payload?.sub ? findUserById(ctx.db, payload.sub) : undefined;
}
