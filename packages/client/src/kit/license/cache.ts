import fs from 'node:fs';
import path from 'node:path';
import { replaceFileSync } from '@svc/protocol/node';
import type { ClientTier } from './format.ts';

/** ~/.svc/license_cache.json: the last answer of the portal for one key, by fingerprint. */
export interface LicenseCache {
  version: 1;
  /** licenseKeyFingerprint() of the key: never the key. */
  fingerprint: string;
  valid: boolean;
  tier: ClientTier;
  reason: string;
  client_id: string | null;
  expires_at: string | null;
  /** This host's clock when the portal answered: the TTL and grace count from here. */
  validated_at: string;
  /** The portal's own checked_at. */
  portal_checked_at: string | null;
}

export const licenseCacheFile = (home: string) => path.join(home, '.svc', 'license_cache.json');

/** The cache, or null when there is none or it cannot be used (a damaged file is reported). */
export function readCache(file: string, warn: (message: string) => void): LicenseCache | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  try {
    const c = JSON.parse(text) as Partial<LicenseCache>;
    if (
      c.version !== 1 ||
      typeof c.fingerprint !== 'string' ||
      typeof c.valid !== 'boolean' ||
      typeof c.tier !== 'string' ||
      typeof c.validated_at !== 'string' ||
      Number.isNaN(Date.parse(c.validated_at))
    )
      throw new Error('unexpected shape');
    return c as LicenseCache;
  } catch {
    warn(`${file} is damaged; ignoring it (it is rewritten after the next online check)`);
    return null;
  }
}

/**
 * Replaced whole with mode 600 in a 700 directory; not durable: a cache lost to a power cut is
 * reported as damaged and written again after the next online check.
 */
export function writeCache(file: string, cache: LicenseCache): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  replaceFileSync(file, `${JSON.stringify(cache, null, 2)}\n`, { durable: false, mode: 0o600 });
}
