import type { Kysely } from 'kysely';
import { highestTier, type Tier } from '@svc/protocol';
import type { Database } from '../db/schema.ts';

/** D3: the highest tier among the active (not revoked, not expired, not inactive) keys of these clients. */
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
