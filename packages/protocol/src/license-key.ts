import type { Tier } from './permissions.ts';

/**
 * The license key format, one rule for the portal (which issues and checks keys) and the
 * client (which reads its tier from the key before the portal answers): `svc_{pro|biz|msp}_`
 * and 64 lower-case hex digits. Any other non-empty key is a legacy shared key.
 */

/** `svc_{pro|biz|msp}_{64 hex}` */
export const LICENSE_KEY_PATTERN = /^svc_(pro|biz|msp)_[0-9a-f]{64}$/;
/** The first 14 characters of a key are its lookup prefix. */
export const LICENSE_KEY_PREFIX_LENGTH = 14;

/** The key-format segment of each tier: `svc_{pro|biz|msp}_<64 hex>`. */
export const TIER_SEGMENTS = { pro: 'professional', biz: 'business', msp: 'msp' } as const satisfies Record<
  string,
  Tier
>;
export type TierSegment = keyof typeof TIER_SEGMENTS;
export const SEGMENT_OF_TIER: Record<Tier, TierSegment> = { professional: 'pro', business: 'biz', msp: 'msp' };

/** The tier a well-formed key claims by its format, or null when the format is wrong. */
export function tierOfLicenseKey(key: string): Tier | null {
  const m = LICENSE_KEY_PATTERN.exec(key);
  return m ? TIER_SEGMENTS[m[1] as TierSegment] : null;
}

/**
 * What a configured key is by its form: none (absent or blank), a well-formed license key, a
 * legacy key (no `svc_` prefix) or a malformed `svc_` key. Surrounding blanks are ignored, as
 * a key pasted into a config file often carries them.
 */
export type LicenseKeyForm =
  | { kind: 'none' }
  | { kind: 'license'; tier: Tier }
  | { kind: 'legacy' }
  | { kind: 'malformed' };

export function licenseKeyForm(key: string | null): LicenseKeyForm {
  const trimmed = key?.trim() ?? '';
  if (trimmed === '') return { kind: 'none' };
  const tier = tierOfLicenseKey(trimmed);
  if (tier !== null) return { kind: 'license', tier };
  return trimmed.startsWith('svc_') ? { kind: 'malformed' } : { kind: 'legacy' };
}

/**
 * Set by svcd in the environment of the `svc` it runs when the key came from one of its config
 * files: that file, so the session's `metadata.license.source` names it (`svcd-config:<file>`)
 * rather than the environment the key arrived through.
 */
export const KEY_CONFIG_FILE_ENV = 'SVC_KEY_CONFIG_FILE';
