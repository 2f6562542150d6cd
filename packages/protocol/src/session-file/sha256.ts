import { hash } from 'node:crypto';

/**
 * SHA-256 in hex over a string's UTF-8 bytes. Node only (node:crypto): this module is reached
 * through the package's `./node` entry, never from the index the web console bundles.
 */
export function sha256Hex(text: string): string {
  // One-shot: no Hash object per call; fingerprints are hashed by the thousand.
  return hash('sha256', text, 'hex');
}
