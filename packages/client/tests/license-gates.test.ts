import { FEATURE_PERMISSIONS, TIERS as PORTAL_TIERS, tierAllows } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import type { ClientTier } from '../src/kit/license/format.ts';
import { GATED_FEATURES, CORE_FEATURES, featureAllowed, gate, requiredTier } from '../src/kit/license/gates.ts';

/** docs/cli.md#license-tier: soft feature gates. */

const TIERS: ClientTier[] = ['', 'professional', 'business', 'msp', 'legacy'];
const allowedTiers = (feature: string) => TIERS.filter((t) => featureAllowed(t, feature));

describe('feature gates', () => {
  it('the gated features are exactly the six', () => {
    expect([...GATED_FEATURES]).toEqual(['compliance', 'benchmark', 'remediation', 'webhooks', 'c2', 'agent_commands']);
  });

  it.each(['compliance', 'benchmark', 'remediation', 'webhooks', 'c2', 'agent_commands'])(
    '%s needs business: business, msp and legacy only',
    (feature) => {
      expect(requiredTier(feature)).toBe('business');
      expect(allowedTiers(feature)).toEqual(['business', 'msp', 'legacy']);
    },
  );

  it('a gate and the portal permission it stands for open at the same tiers', () => {
    for (const [feature, permission] of Object.entries(FEATURE_PERMISSIONS)) {
      if (permission === null) continue;
      for (const tier of PORTAL_TIERS)
        expect(featureAllowed(tier, feature), feature).toBe(tierAllows(tier, permission));
    }
    expect(FEATURE_PERMISSIONS.agent_commands).toBe('agent:commands');
  });

  it.each(['orc964', 'white_label', 'something_new', ''])(
    'an unknown feature (%j) needs msp: msp and legacy only',
    (feature) => {
      expect(requiredTier(feature)).toBe('msp');
      expect(allowedTiers(feature)).toEqual(['msp', 'legacy']);
    },
  );

  it('core features (scan, upload, ...) are allowed for every tier, community included', () => {
    expect([...CORE_FEATURES]).toEqual(expect.arrayContaining(['scan', 'upload']));
    for (const feature of CORE_FEATURES) {
      expect(requiredTier(feature)).toBe('');
      expect(allowedTiers(feature), feature).toEqual(TIERS);
    }
  });

  it('gate(): true without a word when allowed', () => {
    const warnings: string[] = [];
    expect(gate('business', 'compliance', (m) => void warnings.push(m))).toBe(true);
    expect(gate('', 'scan', (m) => void warnings.push(m))).toBe(true);
    expect(gate('legacy', 'unknown_feature', (m) => void warnings.push(m))).toBe(true);
    expect(warnings).toEqual([]);
  });

  it('gate(): a warning naming the feature and the tiers, and false, never an exception', () => {
    const warnings: string[] = [];
    const w = (m: string) => void warnings.push(m);
    expect(() => gate('', 'compliance', w)).not.toThrow();
    expect(gate('professional', 'agent_commands', w)).toBe(false);
    expect(gate('business', 'brand_new', w)).toBe(false);
    expect(warnings).toEqual([
      'Skipping compliance: it needs the business tier (this host: community)',
      'Skipping agent_commands: it needs the business tier (this host: professional)',
      'Skipping brand_new: it needs the msp tier (this host: business)',
    ]);
  });

  it('an unexpected tier string never throws: it is below every gate', () => {
    const warnings: string[] = [];
    expect(gate('enterprise' as ClientTier, 'compliance', (m) => void warnings.push(m))).toBe(false);
    expect(gate('enterprise' as ClientTier, 'scan', (m) => void warnings.push(m))).toBe(true);
    expect(warnings).toEqual(['Skipping compliance: it needs the business tier (this host: enterprise)']);
  });
});
