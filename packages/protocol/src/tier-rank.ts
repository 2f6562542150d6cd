import type { Tier } from './permissions.ts';

/** The order of the tiers: each has everything of the ones below it. */
export const TIER_RANK: Readonly<Record<Tier, number>> = { professional: 0, business: 1, msp: 2 };

/** Whether `tier` has at least what `needed` has. */
export function tierAtLeast(tier: Tier, needed: Tier): boolean {
  return TIER_RANK[tier] >= TIER_RANK[needed];
}

/** The highest of the given tiers, or `fallback` when there is none. */
export function highestTier(tiers: Iterable<Tier>, fallback: Tier = 'professional'): Tier {
  let best: Tier | null = null;
  for (const t of tiers) if (best === null || TIER_RANK[t] > TIER_RANK[best]) best = t;
  return best ?? fallback;
}
