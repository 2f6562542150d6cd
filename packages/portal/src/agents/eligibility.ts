import { sql, type RawBuilder } from 'kysely';
import { TIERS, tierAllows } from '@svc/protocol';

/** The tiers whose agents may receive commands, from the permission matrix (docs/api.md#agents-and-commands). */
const COMMAND_TIERS: string[] = TIERS.filter((t) => tierAllows(t, 'agent:commands'));

/** A usable key, as the key check decides (alias `l`). */
const usable = (now: Date) =>
  sql<boolean>`l.is_active AND l.revoked_at IS NULL AND (l.expires_at IS NULL OR l.expires_at > ${now})`;

/**
 * Whether an agent may receive commands: it follows the key that
 * REGISTERED it, never whichever key of the client heartbeated last. When that key is no
 * longer usable (revoked, inactive, expired or deleted), the highest tier among the
 * client's active keys decides; with no active key left, the agent gets nothing. An agent
 * the legacy key registered (license_id null) has the legacy key's msp permissions.
 * `clientId`/`licenseId` are the agent's columns (SQL expressions).
 */
export function commandEligible(
  clientId: RawBuilder<string>,
  licenseId: RawBuilder<string | null>,
  now: Date,
): RawBuilder<boolean> {
  return sql<boolean>`(CASE WHEN ${licenseId} IS NULL THEN true ELSE COALESCE(
      (SELECT l.tier = ANY(${COMMAND_TIERS}) FROM licenses l WHERE l.id = ${licenseId} AND ${usable(now)}),
      EXISTS (SELECT 1 FROM licenses l WHERE l.client_id = ${clientId} AND l.tier = ANY(${COMMAND_TIERS}) AND ${usable(now)})
    ) END)`;
}
