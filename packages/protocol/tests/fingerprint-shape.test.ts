import { Value } from '@sinclair/typebox/value';
import {
  Fingerprint,
  FINGERPRINT_PATTERN,
  isFingerprint,
  RecordFinding,
  SHARE_TOKEN_PATTERN,
  isShareToken,
} from '@svc/protocol';
import { findingFingerprint } from '@svc/protocol/node';
import { describe, expect, it } from 'vitest';

/** The shape of a finding's fingerprint, and of the share token that happens to look the same. */

const HEX64 = '0123456789abcdef'.repeat(4);

describe("a finding's fingerprint", () => {
  it('is 64 lower-case hex digits, as findingFingerprint computes it', () => {
    const fp = findingFingerprint({ rule_id: 'svc.tls.v1_0', host: '10.0.0.5', port: 443, protocol: 'tcp' });
    expect(isFingerprint(fp)).toBe(true);
    expect(isFingerprint(HEX64)).toBe(true);
    expect(FINGERPRINT_PATTERN).toBe('^[0-9a-f]{64}$');
  });

  it('refuses 63 or 65 digits, upper case, blanks, other letters and values that are not strings', () => {
    const bad: unknown[] = [
      HEX64.slice(1),
      `${HEX64}0`,
      HEX64.toUpperCase(),
      ` ${HEX64}`,
      `${HEX64}\n`,
      `g${HEX64.slice(1)}`,
      '',
      null,
      undefined,
      64,
      [HEX64],
    ];
    for (const v of bad) expect(isFingerprint(v), JSON.stringify(v)).toBe(false);
  });

  it('is the schema the wire contract validates with: the same values pass, the same fail', () => {
    expect(Fingerprint.pattern).toBe(FINGERPRINT_PATTERN);
    expect(Value.Check(Fingerprint, HEX64)).toBe(true);
    expect(Value.Check(Fingerprint, HEX64.toUpperCase())).toBe(false);
    expect(Value.Check(Fingerprint, `${HEX64}0`)).toBe(false);
    expect(RecordFinding.properties.fingerprint).toBe(Fingerprint);
  });
});

describe('a share token', () => {
  it('has a rule of its own: 64 lower-case hex digits', () => {
    expect(SHARE_TOKEN_PATTERN).toBe('^[0-9a-f]{64}$');
    expect(isShareToken(HEX64)).toBe(true);
    for (const v of [HEX64.toUpperCase(), HEX64.slice(1), `${HEX64}0`, null, 7])
      expect(isShareToken(v), JSON.stringify(v)).toBe(false);
  });
});
