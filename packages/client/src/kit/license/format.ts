import { licenseKeyForm } from '@svc/protocol';

/** The tier names of the scanner side: the portal's three, `legacy`, and '' for community (unlicensed). */
export type ClientTier = 'professional' | 'business' | 'msp' | 'legacy' | '';

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
  const form = licenseKeyForm(key);
  if (form.kind === 'none') return { licensed: false, tier: '', warning: null };
  if (form.kind === 'license') return { licensed: true, tier: form.tier, warning: null };
  if (form.kind === 'legacy') {
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
