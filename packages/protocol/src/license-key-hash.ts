import { sha256Hex } from './session-file/sha256.ts';

/**
 * The SHA-256 (hex) of a license key, surrounding blanks ignored: what the portal stores at rest
 * and the client writes as the key's fingerprint in a session file, never the key itself.
 */
export function licenseKeySha256(key: string): string {
  return sha256Hex(key.trim());
}

/** What the client's license cache keeps instead of the key: the first 16 hex digits of its SHA-256. */
export function licenseKeyFingerprint(key: string): string {
  return licenseKeySha256(key).slice(0, 16);
}
