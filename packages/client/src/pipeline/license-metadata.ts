import { SEGMENT_OF_TIER } from '@svc/protocol';
import type { ClientTier } from '../kit/license/format.ts';
import type { LicenseState } from '../kit/license/tier.ts';

/**
 * metadata.license from the license module's state (validated online once per run, before the
 * stages): tier in the file's spelling, the key's fingerprint (the whole SHA-256 of the key in
 * hex, never the key; the license cache keeps only a prefix), where the key came from, and
 * when the portal last validated it. Community (no key, or a downgrade) writes no block.
 */

export interface LicenseMetadata {
  tier: 'pro' | 'biz' | 'msp' | 'legacy';
  fingerprint?: string;
  source?: string;
  validated_at?: string;
}

const FILE_TIER: Record<Exclude<ClientTier, ''>, LicenseMetadata['tier']> = { ...SEGMENT_OF_TIER, legacy: 'legacy' };

export function licenseMetadata(
  state: Pick<LicenseState, 'tier' | 'key_sha256' | 'source' | 'validated_at'> | null,
): LicenseMetadata | null {
  if (state === null || state.tier === '' || !Object.hasOwn(FILE_TIER, state.tier)) return null;
  return {
    tier: FILE_TIER[state.tier],
    ...(state.key_sha256 === null ? {} : { fingerprint: state.key_sha256 }),
    ...(state.source === null ? {} : { source: state.source }),
    ...(state.validated_at === null ? {} : { validated_at: state.validated_at }),
  };
}
