import { Type } from '@sinclair/typebox';

/**
 * The shape of a finding's fingerprint (findings[].fingerprint, the remediation entries and
 * records that name it): the SHA-256 hex digest findingFingerprint computes, 64 lower-case
 * hex digits. Other 64-hex values (share tokens, webhook secrets, file digests) have rules of
 * their own; this one is for findings only.
 */
export const FINGERPRINT_PATTERN = '^[0-9a-f]{64}$';

const FINGERPRINT_RE = new RegExp(FINGERPRINT_PATTERN);

/** True for a string of the fingerprint's shape; a value of another type is never one. */
export function isFingerprint(value: unknown): value is string {
  return typeof value === 'string' && FINGERPRINT_RE.test(value);
}

export const Fingerprint = Type.String({
  pattern: FINGERPRINT_PATTERN,
  description:
    "A finding's fingerprint, 64 lower-case hex: findingFingerprint(rule_id, host, port, protocol), the same in every session of the same target",
});
