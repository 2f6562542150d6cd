import { FEATURE_PERMISSIONS, featureTier, type GatedFeature, type Tier, tierAtLeast } from '@svc/protocol';
import type { ClientTier } from './format.ts';

/** Features every tier has, community included: core scanning is never gated (docs/cli.md#license-tier). */
export const CORE_FEATURES = ['scan', 'upload', 'report', 'share', 'download', 'alerts'] as const;
/** docs/cli.md#license-tier: the gated features, each at the tier the portal grants its permission (business). */
export const GATED_FEATURES = Object.keys(FEATURE_PERMISSIONS) as GatedFeature[];
const isGated = (feature: string): feature is GatedFeature => Object.hasOwn(FEATURE_PERMISSIONS, feature);

/** A legacy key ranks as msp (all features); community and a tier this client does not know rank below every tier. */
const RANKED: Readonly<Record<string, Tier>> = {
  professional: 'professional',
  business: 'business',
  msp: 'msp',
  legacy: 'msp',
};

/** The tier a feature needs: '' (any) for core features, its permission's tier for a gated one, msp for anything else. */
export function requiredTier(feature: string): ClientTier {
  if ((CORE_FEATURES as readonly string[]).includes(feature)) return '';
  return isGated(feature) ? featureTier(feature) : 'msp';
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
