import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { recordAuditEvent } from '../audit/record.ts';
import { type Config, ConfigError } from '../config/index.ts';
import type { Database } from '../db/schema.ts';
import { passwordWeakness } from './password-strength.ts';
import { hashPassword } from './passwords.ts';
import { findUserByNormalizedEmail, insertUser } from './queries.ts';
import { newUserId, normalizeEmail } from './users.ts';

/**
 * Refuses a weak SVC_ADMIN_PASSWORD before anything starts, with the estimator users created
 * over the API meet; the message names the variable, never the password. Only for the portal's
 * own provider: with an external one the variables are ignored.
 */
export function checkBootstrapPassword(config: Pick<Config, 'adminEmail' | 'adminPassword' | 'baseUrl'>): void {
  const { adminEmail, adminPassword, baseUrl } = config;
  if (adminEmail === null || adminPassword === null || adminPassword === '') return;
  const weakness = passwordWeakness(adminPassword, { email: adminEmail, host: new URL(baseUrl).hostname });
  if (weakness !== null)
    throw new ConfigError('SVC_ADMIN_PASSWORD', `is too weak${weakness.replace(/^Password is too weak/, '')}`);
}

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
  // Every start after the first finds the admin: no hash (tens of ms of CPU) for an insert that does nothing.
  if ((await findUserByNormalizedEmail(db, normalizeEmail(email))) !== undefined) return;
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
