import { createHash } from 'node:crypto';

/** The tier names of the scanner side: the portal's three, `legacy`, and '' for community (unlicensed). */
export type ClientTier = 'professional' | 'business' | 'msp' | 'legacy' | '';

const TIER_SEGMENTS: Record<string, ClientTier> = { pro: 'professional', biz: 'business', msp: 'msp' };
const KEY_FORMAT = /^svc_(pro|biz|msp)_[0-9a-f]{64}$/;

export interface FormatResult {
  /** SVC_LICENSED */
  licensed: boolean;
  /** SVC_LICENSE_TIER */
  tier: ClientTier;
  /** Set when the key maps to legacy: the one-time warning to show. */
  warning: string | null;
}

/**
 * docs/cli.md#license-tier: `svc_{pro|biz|msp}_{64 hex}` gives its tier; any
 * other non-empty key is `legacy` (all features) with a warning: a deprecation warning for a
 * key without the `svc_` prefix, a format warning for a malformed `svc_` key (the portal's 403
 * stays authoritative). No key is community: unlicensed, tier ''.
 */
export function parseKeyFormat(key: string | null): FormatResult {
  if (key === null || key.trim() === '') return { licensed: false, tier: '', warning: null };
  const m = KEY_FORMAT.exec(key.trim());
  if (m) return { licensed: true, tier: TIER_SEGMENTS[m[1] as string] as ClientTier, warning: null };
  if (!key.trim().startsWith('svc_')) {
    return {
      licensed: true,
      tier: 'legacy',
      warning:
        'A legacy API key (without the svc_ prefix) is in use: it is deprecated; ask for a license key of the form svc_<tier>_<64 hex>',
    };
  }
  return {
    licensed: true,
    tier: 'legacy',
    warning:
      'The license key does not match svc_{pro|biz|msp}_{64 hex}; treating it as legacy until the portal says otherwise',
  };
}

/** What the cache stores instead of the key: the first 16 hex characters of its SHA-256. */
export function keySha256(key: string): string {
  return createHash('sha256').update(key.trim(), 'utf8').digest('hex');
}

export function keyFingerprint(key: string): string {
  return keySha256(key).slice(0, 16);
}
