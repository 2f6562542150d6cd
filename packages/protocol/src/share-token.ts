/**
 * A session's share token as the portal issues it (32 random bytes) and as share URLs carry
 * it: 64 lower-case hex digits. The same shape as a finding's fingerprint, but a different
 * rule: a secret, never derived from a finding.
 */
export const SHARE_TOKEN_PATTERN = '^[0-9a-f]{64}$';

const SHARE_TOKEN_RE = new RegExp(SHARE_TOKEN_PATTERN);

/** True for a string of the share token's shape. */
export function isShareToken(value: unknown): value is string {
  return typeof value === 'string' && SHARE_TOKEN_RE.test(value);
}
