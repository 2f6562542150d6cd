import { describe, expect, it } from 'vitest';
import { licenseMetadata } from '../src/pipeline/license-metadata.ts';

describe('metadata.license', () => {
  it('maps the tier to the file spelling and never carries the key', () => {
    const state = {
      tier: 'business' as const,
      fingerprint: '0123456789abcdef',
      source: 'env:SVC_LICENSE_KEY' as const,
      validated_at: '2025-03-01T14:00:00.000Z',
    };
    expect(licenseMetadata(state)).toEqual({
      tier: 'biz',
      fingerprint: '0123456789abcdef',
      source: 'env:SVC_LICENSE_KEY',
      validated_at: '2025-03-01T14:00:00.000Z',
    });
    expect(licenseMetadata({ ...state, tier: 'professional' })?.tier).toBe('pro');
    expect(licenseMetadata({ ...state, tier: 'msp' })?.tier).toBe('msp');
    expect(
      licenseMetadata({ tier: 'legacy', fingerprint: null, source: 'config:SVC_API_KEY', validated_at: null }),
    ).toEqual({ tier: 'legacy', source: 'config:SVC_API_KEY' });
  });

  it('community (no key or a downgrade) writes no block', () => {
    expect(licenseMetadata(null)).toBeNull();
    expect(licenseMetadata({ tier: '', fingerprint: 'ab', source: null, validated_at: null })).toBeNull();
  });
});
