import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { recordAuditEvent } from '../audit/record.ts';
import type { Database } from '../db/schema.ts';
import { hashPassword } from './passwords.ts';
import { insertUser } from './queries.ts';
import { newUserId, normalizeEmail } from './users.ts';

/**
 * SVC_ADMIN_EMAIL + SVC_ADMIN_PASSWORD create the first admin when that account does
 * not exist. An existing account is left alone (its password is never reset from the
 * environment), so changing the variable later cannot take over an account.
 */
export async function bootstrapAdmin(
  db: Kysely<Database>,
  logger: Logger,
  email: string | null,
  password: string | null,
): Promise<void> {
  if (email === null || password === null) return;
  const passwordHash = await hashPassword(password);
  const created = await insertUser(db, {
    id: newUserId(),
    email,
    email_normalized: normalizeEmail(email),
    password_hash: passwordHash,
    role: 'admin',
    client_ids: [],
    updated_at: new Date(),
  });
  if (created) {
    await recordAuditEvent(db, {
      event_type: 'user_created',
      actor: 'bootstrap',
      data: { user_id: created.id, email: created.email, role: 'admin' },
    });
    logger.info({ email }, 'created the first admin from SVC_ADMIN_EMAIL');
  }
}
