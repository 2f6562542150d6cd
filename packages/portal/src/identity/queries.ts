import type { JWK } from 'jose';
import { sql, type Insertable, type Kysely, type Transaction, type Updateable } from 'kysely';
import type { Database, UsersTable } from '../db/schema.ts';
import type { UserRow } from './users.ts';

type Db = Kysely<Database>;
type Trx = Transaction<Database>;

// Users.

export function findUserById(db: Db, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findUserByNormalizedEmail(db: Db, emailNormalized: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email_normalized', '=', emailNormalized).executeTakeFirst();
}

export function listUsers(db: Db): Promise<UserRow[]> {
  return db.selectFrom('users').selectAll().orderBy('created_at').execute();
}

/** The new row, or undefined when the normalised e-mail is taken. */
export function insertUser(db: Db, values: Insertable<UsersTable>): Promise<UserRow | undefined> {
  return db
    .insertInto('users')
    .values(values)
    .onConflict((oc) => oc.column('email_normalized').doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** Locks the admin rows so two concurrent demotions or deletions cannot remove the last admin. */
export function lockAdmins(trx: Trx): Promise<{ id: string }[]> {
  return trx.selectFrom('users').select('id').where('role', '=', 'admin').forUpdate().execute();
}

export function lockUserForUpdate(trx: Trx, id: string): Promise<UserRow | undefined> {
  return trx.selectFrom('users').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/** Share-locked: a password change or deletion (which lock the row for update) waits, or is waited for. */
export function lockUserForShare(trx: Trx, id: string): Promise<UserRow | undefined> {
  return trx.selectFrom('users').selectAll().where('id', '=', id).forShare().executeTakeFirst();
}

export function updateUserRow(trx: Trx, id: string, set: Updateable<UsersTable>): Promise<UserRow> {
  return trx.updateTable('users').set(set).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function deleteUserRow(trx: Trx, id: string): Promise<void> {
  await trx.deleteFrom('users').where('id', '=', id).execute();
}

// Signing keys.

export interface StoredSigningKey {
  kid: string;
  private_jwk_encrypted: string | null;
}

/** Serialises key creation across replicas starting together (held until the transaction ends). */
export async function lockSigningKeys(trx: Trx): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext('svc.identity_signing_keys'))`.execute(trx);
}

/** Keys an earlier version stored with their private half in clear. */
export function clearSigningKeys(trx: Trx): Promise<{ kid: string; private_jwk: Record<string, unknown> | null }[]> {
  return trx
    .selectFrom('identity_signing_keys')
    .select(['kid', 'private_jwk'])
    .where('private_jwk', 'is not', null)
    .execute();
}

/** Stores the encrypted private half and empties the clear column. */
export async function storeEncryptedPrivateKey(trx: Trx, kid: string, encrypted: string): Promise<void> {
  await trx
    .updateTable('identity_signing_keys')
    .set({ private_jwk_encrypted: encrypted, private_jwk: null })
    .where('kid', '=', kid)
    .execute();
}

export function newestSigningKey(trx: Trx): Promise<StoredSigningKey | undefined> {
  return trx
    .selectFrom('identity_signing_keys')
    .select(['kid', 'private_jwk_encrypted'])
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export function insertSigningKey(
  trx: Trx,
  key: { kid: string; privateJwkEncrypted: string; publicJwk: JWK },
): Promise<StoredSigningKey> {
  return trx
    .insertInto('identity_signing_keys')
    .values({
      kid: key.kid,
      private_jwk: null,
      private_jwk_encrypted: key.privateJwkEncrypted,
      public_jwk: JSON.stringify(key.publicJwk),
    })
    .returning(['kid', 'private_jwk_encrypted'])
    .executeTakeFirstOrThrow();
}

/** Newest first. */
export async function publicJwkRows(db: Db): Promise<JWK[]> {
  const rows = await db
    .selectFrom('identity_signing_keys')
    .select('public_jwk')
    .orderBy('created_at', 'desc')
    .execute();
  return rows.map((r) => r.public_jwk as JWK);
}

// Login failures, per (e-mail, address) and per e-mail across addresses.

/** The (e-mail, address) count, created at zero if missing, locked for update. */
export async function lockLoginFailures(
  trx: Trx,
  emailNormalized: string,
  address: string,
  now: Date,
): Promise<{ failed_logins: number; locked_until: Date | null }> {
  // One statement that creates or locks the row and returns it: an insert-then-select could
  // find nothing when a concurrent successful login deleted the row in between.
  return trx
    .insertInto('login_failures')
    .values({ email_normalized: emailNormalized, address, failed_logins: 0, locked_until: null, updated_at: now })
    .onConflict((oc) =>
      oc
        .columns(['email_normalized', 'address'])
        .doUpdateSet((eb) => ({ failed_logins: eb.ref('login_failures.failed_logins') })),
    )
    .returning(['failed_logins', 'locked_until'])
    .executeTakeFirstOrThrow();
}

/** Sets the (e-mail, address) count; `lockedUntil` null leaves the current lock as it is. */
export async function setLoginFailures(
  trx: Trx,
  emailNormalized: string,
  address: string,
  failures: number,
  lockedUntil: Date | null,
  now: Date,
): Promise<void> {
  await trx
    .updateTable('login_failures')
    .set({ failed_logins: failures, updated_at: now, ...(lockedUntil !== null ? { locked_until: lockedUntil } : {}) })
    .where('email_normalized', '=', emailNormalized)
    .where('address', '=', address)
    .execute();
}

/** Adds one failure to the e-mail's count across addresses; answers the new count. */
export async function countEmailFailure(trx: Trx, emailNormalized: string, now: Date): Promise<number> {
  const row = await trx
    .insertInto('login_email_failures')
    .values({ email_normalized: emailNormalized, failed_logins: 1, updated_at: now })
    .onConflict((oc) =>
      oc
        .column('email_normalized')
        .doUpdateSet((eb) => ({ failed_logins: eb('login_email_failures.failed_logins', '+', 1), updated_at: now })),
    )
    .returning('failed_logins')
    .executeTakeFirstOrThrow();
  return row.failed_logins;
}

export async function deleteLoginFailuresFrom(db: Db, emailNormalized: string, address: string): Promise<void> {
  await db
    .deleteFrom('login_failures')
    .where('email_normalized', '=', emailNormalized)
    .where('address', '=', address)
    .execute();
}

export async function deleteEmailFailures(db: Db, emailNormalized: string): Promise<void> {
  await db.deleteFrom('login_email_failures').where('email_normalized', '=', emailNormalized).execute();
}

export async function deleteLoginFailuresEverywhere(db: Db, emailNormalized: string): Promise<void> {
  await db.deleteFrom('login_failures').where('email_normalized', '=', emailNormalized).execute();
}

/** Counts last failed before `cutoff` whose lock (if any) has ended; answers how many rows went. */
export async function deleteStaleLoginFailures(db: Db, cutoff: Date, now: Date): Promise<number> {
  const res = await db
    .deleteFrom('login_failures')
    .where('updated_at', '<', cutoff)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
    .executeTakeFirst();
  const across = await db.deleteFrom('login_email_failures').where('updated_at', '<', cutoff).executeTakeFirst();
  return Number(res.numDeletedRows) + Number(across.numDeletedRows);
}

// Token families and refresh tokens.

export async function insertTokenFamily(db: Db, id: string, userId: string, now: Date): Promise<void> {
  await db.insertInto('token_families').values({ id, user_id: userId, started_at: now, revoked_at: null }).execute();
}

export async function insertRefreshToken(
  db: Db,
  token: { hash: string; userId: string; familyId: string; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto('refresh_tokens')
    .values({
      token_hash: token.hash,
      user_id: token.userId,
      family_id: token.familyId,
      expires_at: token.expiresAt,
      used_at: null,
      revoked_at: null,
    })
    .execute();
}

/** Revoke a family: its refresh tokens stop refreshing and its access tokens stop verifying. */
export async function revokeFamily(db: Db, familyId: string, now: Date): Promise<void> {
  await db
    .updateTable('token_families')
    .set({ revoked_at: now })
    .where('id', '=', familyId)
    .where('revoked_at', 'is', null)
    .execute();
  await db
    .updateTable('refresh_tokens')
    .set({ revoked_at: now })
    .where('family_id', '=', familyId)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Every live family of the user ends with its refresh tokens; answers how many families ended. */
export async function revokeUserFamilies(db: Db, userId: string, now: Date): Promise<number> {
  const families = await db
    .updateTable('token_families')
    .set({ revoked_at: now })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  await db
    .updateTable('refresh_tokens')
    .set({ revoked_at: now })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .execute();
  return Number(families.numUpdatedRows);
}

/** A new password: every family of the user ends (and `tokens_valid_after` records when). */
export async function revokeUserTokens(db: Db, userId: string, now: Date): Promise<void> {
  await db.updateTable('users').set({ tokens_valid_after: now }).where('id', '=', userId).execute();
  await revokeUserFamilies(db, userId, now);
}

/** The family a refresh token (used, revoked or not) belongs to. */
export function familyIdOfRefreshToken(db: Db, hash: string): Promise<{ family_id: string } | undefined> {
  return db.selectFrom('refresh_tokens').select('family_id').where('token_hash', '=', hash).executeTakeFirst();
}

/** The user's family `sid`, if it exists. */
export function findFamily(db: Db, sid: string, userId: string): Promise<{ revoked_at: Date | null } | undefined> {
  return db
    .selectFrom('token_families')
    .select('revoked_at')
    .where('id', '=', sid)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

export function refreshTokenOwner(trx: Trx, hash: string): Promise<{ user_id: string } | undefined> {
  return trx.selectFrom('refresh_tokens').select('user_id').where('token_hash', '=', hash).executeTakeFirst();
}

export function familyOfRefreshToken(
  trx: Trx,
  hash: string,
): Promise<{ started_at: Date; revoked_at: Date | null } | undefined> {
  return trx
    .selectFrom('refresh_tokens')
    .innerJoin('token_families', 'token_families.id', 'refresh_tokens.family_id')
    .select(['token_families.started_at', 'token_families.revoked_at'])
    .where('token_hash', '=', hash)
    .executeTakeFirst();
}

/** Marks an unused, unrevoked, unexpired refresh token used; its family, or undefined when it was not claimable. */
export function claimRefreshToken(trx: Trx, hash: string, now: Date): Promise<{ family_id: string } | undefined> {
  return trx
    .updateTable('refresh_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', hash)
    .where('used_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('family_id')
    .executeTakeFirst();
}

export function refreshTokenUse(
  trx: Trx,
  hash: string,
): Promise<{ family_id: string; used_at: Date | null } | undefined> {
  return trx
    .selectFrom('refresh_tokens')
    .select(['family_id', 'used_at'])
    .where('token_hash', '=', hash)
    .executeTakeFirst();
}
