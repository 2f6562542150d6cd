import { randomBytes } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { User } from '@svc/protocol';
import type { Database, UsersTable } from '../db/schema.ts';

export type UserRow = Selectable<UsersTable>;

export function newUserId(): string {
  return `usr_${randomBytes(8).toString('hex')}`;
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function presentUser(row: UserRow): User {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    client_ids: row.client_ids,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function findUserById(db: Kysely<Database>, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findUserByEmail(db: Kysely<Database>, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email_normalized', '=', normalizeEmail(email)).executeTakeFirst();
}
