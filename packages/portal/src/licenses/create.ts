import { type CreateLicenseBody, TIER_DEFAULT_LIMITS } from '@svc/protocol';
import { recordAuditEvent } from '../audit/record.ts';
import { DomainError } from '../domain/errors.ts';
import { announceLicenseChange, type LicenseChangeBy, type LicenseChangeDeps } from './changes.ts';
import { generateLicenseKey, newLicenseId } from './keys.ts';
import type { LicenseRow } from './present.ts';
import { insertLicense } from './queries.ts';

export interface LicenseInput extends Omit<CreateLicenseBody, 'expires_at'> {
  expires_at: Date | null;
}

/**
 * docs/api.md#licenses: a new key for a client. Omitted limits take the tier's defaults; an explicit null means
 * unlimited. The plaintext key is answered once; only its SHA-256 is stored.
 */
export async function createLicense(
  deps: LicenseChangeDeps,
  input: LicenseInput,
  { actor, now }: LicenseChangeBy,
): Promise<{ row: LicenseRow; plaintextKey: string }> {
  if (input.expires_at !== null && input.expires_at.getTime() <= now.getTime())
    throw new DomainError('invalid.license_expiry', 'expires_at must be in the future');
  const defaults = TIER_DEFAULT_LIMITS[input.tier];
  const key = generateLicenseKey(input.tier);
  const { row, event } = await deps.db.transaction().execute(async (trx) => {
    const row = await insertLicense(trx, {
      id: newLicenseId(),
      key_prefix: key.prefix,
      key_hash: key.hash,
      tier: input.tier,
      client_id: input.client_id,
      name: input.name,
      description: input.description ?? null,
      max_sessions: input.max_sessions === undefined ? defaults.max_sessions : input.max_sessions,
      max_agents: input.max_agents === undefined ? defaults.max_agents : input.max_agents,
      expires_at: input.expires_at,
      revoked_at: null,
      created_by: actor,
      created_at: now,
      updated_at: now,
    });
    const event = await recordAuditEvent(trx, {
      event_type: 'license_created',
      actor,
      client_id: row.client_id,
      data: {
        license_id: row.id,
        key_prefix: row.key_prefix,
        tier: row.tier,
        name: row.name,
        max_sessions: row.max_sessions,
        max_agents: row.max_agents,
        expires_at: row.expires_at?.toISOString() ?? null,
      },
    });
    return { row, event };
  });
  announceLicenseChange(deps, event);
  return { row, plaintextKey: key.plaintext };
}
