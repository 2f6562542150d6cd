import type { Insertable, Kysely, Transaction, Updateable } from 'kysely';
import { highestTier, type Tier } from '@svc/protocol';
import type { Database, LicensesTable } from '../db/schema.ts';
import type { LicenseRow } from './present.ts';

type Db = Kysely<Database> | Transaction<Database>;

/** docs/api.md#credentials: the highest tier among the active (not revoked, not expired, not inactive) keys of these clients. */
export async function highestActiveTier(db: Kysely<Database>, clientIds: string[], now: Date): Promise<Tier> {
  if (clientIds.length === 0) return 'professional';
  const rows = await db
    .selectFrom('licenses')
    .select('tier')
    .distinct()
    .where('client_id', 'in', clientIds)
    .where('is_active', '=', true)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .execute();
  return highestTier(rows.map((r) => r.tier));
}

/** Every license, newest first; only one client's when `clientId` is given. */
export function selectLicenses(db: Db, clientId: string | undefined): Promise<LicenseRow[]> {
  let q = db.selectFrom('licenses').selectAll().orderBy('created_at', 'desc').orderBy('id');
  if (clientId) q = q.where('client_id', '=', clientId);
  return q.execute();
}

/**
 * The license, locked for the rest of the transaction: serialises what counts against one key
 * (its uploads' session limit, its agents' registrations) with its edits.
 */
export function lockLicense(trx: Db, id: string): Promise<LicenseRow | undefined> {
  return trx.selectFrom('licenses').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export function insertLicense(trx: Transaction<Database>, values: Insertable<LicensesTable>): Promise<LicenseRow> {
  return trx.insertInto('licenses').values(values).returningAll().executeTakeFirstOrThrow();
}

export function updateLicense(
  trx: Transaction<Database>,
  id: string,
  changes: Updateable<LicensesTable>,
): Promise<LicenseRow> {
  return trx.updateTable('licenses').set(changes).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function deleteLicenseRow(trx: Transaction<Database>, id: string): Promise<void> {
  await trx.deleteFrom('licenses').where('id', '=', id).execute();
}

/** Licenses whose key starts with `prefix`: the candidates a presented key is compared against. */
export function selectLicensesByKeyPrefix(db: Kysely<Database>, prefix: string): Promise<LicenseRow[]> {
  return db.selectFrom('licenses').selectAll().where('key_prefix', '=', prefix).execute();
}
