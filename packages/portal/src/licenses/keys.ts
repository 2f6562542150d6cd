import { hash, randomBytes } from 'node:crypto';
import { LICENSE_KEY_PREFIX_LENGTH, SEGMENT_OF_TIER, type Tier } from '@svc/protocol';
import { licenseKeySha256 } from '@svc/protocol/node';

export function sha256(value: string): Buffer {
  // One-shot hash: no Hash object per call (this runs on every key-authenticated request).
  return hash('sha256', value, 'buffer');
}

/** A new key: plaintext (shown once), its 14-character lookup prefix and the SHA-256 stored at rest. */
export function generateLicenseKey(tier: Tier): { plaintext: string; prefix: string; hash: string } {
  const plaintext = `svc_${SEGMENT_OF_TIER[tier]}_${randomBytes(32).toString('hex')}`;
  return { plaintext, prefix: plaintext.slice(0, LICENSE_KEY_PREFIX_LENGTH), hash: licenseKeySha256(plaintext) };
}

export function newLicenseId(): string {
  return `lic_${randomBytes(8).toString('hex')}`;
}
