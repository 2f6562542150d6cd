import { type Tier, tierAtLeast } from '@svc/protocol';
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

/** A legacy key ranks as msp (all features); community and a tier this client does not know rank below every tier. */
const RANKED: Readonly<Record<string, Tier>> = {
  professional: 'professional',
  business: 'business',
  msp: 'msp',
  legacy: 'msp',
};

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
  const ranked = Object.hasOwn(RANKED, tier) ? RANKED[tier] : undefined;
  return ranked !== undefined && tierAtLeast(ranked, needed as Tier);
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
