import type { Selectable } from 'kysely';
import type { License } from '@svc/protocol';
import type { LicensesTable } from '../db/schema.ts';

export type LicenseRow = Selectable<LicensesTable>;

/** Lifecycle state: revoked beats expired beats inactive (revocation is permanent, so it is the most useful answer). */
export function licenseStatus(row: LicenseRow, now: Date): License['status'] {
  if (row.revoked_at !== null) return 'revoked';
  if (row.expires_at !== null && row.expires_at.getTime() <= now.getTime()) return 'expired';
  if (!row.is_active) return 'inactive';
  return 'active';
}

/** The admin view of a license: never the key hash. */
export function presentLicense(row: LicenseRow, now: Date): License {
  return {
    id: row.id,
    key_prefix: row.key_prefix,
    tier: row.tier,
    client_id: row.client_id,
    name: row.name,
    description: row.description,
    max_sessions: row.max_sessions,
    max_agents: row.max_agents,
    expires_at: row.expires_at?.toISOString() ?? null,
    is_active: row.is_active,
    revoked_at: row.revoked_at?.toISOString() ?? null,
    status: licenseStatus(row, now),
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** The answer to a creation: the only one that carries the plaintext key. */
export function presentCreatedLicense(row: LicenseRow, now: Date, plaintextKey: string) {
  return { ...presentLicense(row, now), plaintext_key: plaintextKey };
}
