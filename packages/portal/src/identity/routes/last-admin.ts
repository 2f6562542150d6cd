import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.ts';

/** Lock the admin rows so two concurrent demotions or deletions cannot remove the last admin. */
export function lockAdmins(trx: Transaction<Database>): Promise<{ id: string }[]> {
  return trx.selectFrom('users').select('id').where('role', '=', 'admin').forUpdate().execute();
}
