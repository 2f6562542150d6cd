import { describe, expect, it } from 'vitest';
import { licenseMetadata } from '../src/pipeline/license-metadata.ts';

describe('metadata.license', () => {
  it('maps the tier to the file spelling, carries the SHA-256 of the key and never the key', () => {
    const state = {
      tier: 'business' as const,
      key_sha256: 'ab'.repeat(32),
      source: 'env:SVC_LICENSE_KEY' as const,
      validated_at: '2025-03-01T14:00:00.000Z',
    };
    expect(licenseMetadata(state)).toEqual({
      tier: 'biz',
      fingerprint: 'ab'.repeat(32),
      source: 'env:SVC_LICENSE_KEY',
      validated_at: '2025-03-01T14:00:00.000Z',
    });
    expect(licenseMetadata({ ...state, tier: 'professional' })?.tier).toBe('pro');
    expect(licenseMetadata({ ...state, tier: 'msp' })?.tier).toBe('msp');
    expect(
      licenseMetadata({ tier: 'legacy', key_sha256: null, source: 'config:SVC_API_KEY', validated_at: null }),
    ).toEqual({ tier: 'legacy', source: 'config:SVC_API_KEY' });
  });

  it('community (no key or a downgrade) writes no block', () => {
    expect(licenseMetadata(null)).toBeNull();
    expect(licenseMetadata({ tier: '', key_sha256: 'ab', source: null, validated_at: null })).toBeNull();
  });
});
