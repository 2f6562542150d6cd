import type { ClientTier } from './format.ts';

/** Features every tier has, community included: core scanning is never gated (docs/cli.md#license-tier). */
export const CORE_FEATURES = ['scan', 'upload', 'report', 'share', 'download', 'alerts'] as const;
/** docs/cli.md#license-tier: these need business or above. */
export const BUSINESS_FEATURES = [
  'compliance',
  'benchmark',
  'remediation',
  'webhooks',
  'c2',
  'agent_commands',
] as const;

const RANK: Record<ClientTier, number> = { '': 0, professional: 1, business: 2, msp: 3, legacy: 3 };

/** The tier a feature needs: '' (any) for core features, business for the list, msp for anything else. */
export function requiredTier(feature: string): ClientTier {
  if ((CORE_FEATURES as readonly string[]).includes(feature)) return '';
  if ((BUSINESS_FEATURES as readonly string[]).includes(feature)) return 'business';
  return 'msp';
}

/** Core features always pass; a tier string this client does not know ranks as community. */
export function featureAllowed(tier: ClientTier, feature: string): boolean {
  const needed = requiredTier(feature);
  if (needed === '') return true;
  return (Object.hasOwn(RANK, tier) ? RANK[tier] : 0) >= RANK[needed];
}

/**
 * A soft gate: true when the feature may run; otherwise a warning and false, so the caller
 * skips the feature and goes on (licensing never fails a scan).
 */
export function gate(tier: ClientTier, feature: string, warn: (message: string) => void): boolean {
  if (featureAllowed(tier, feature)) return true;
  warn(
    `Skipping ${feature}: it needs the ${requiredTier(feature)} tier (this host: ${tier === '' ? 'community' : tier})`,
  );
  return false;
}
