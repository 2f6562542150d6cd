import { describe, expect, it } from 'vitest';
import {
  COMMAND_STATUSES,
  COMMAND_TRANSITIONS,
  finishedCommandStatus,
  highestTier,
  isFinalCommandStatus,
  isScannerSessionId,
  isValidSessionId,
  LICENSE_KEY_PREFIX_LENGTH,
  licenseKeyForm,
  mayReportCommandStatus,
  MAX_SESSION_ID_LENGTH,
  REPORTABLE_STATUSES,
  SEGMENT_OF_TIER,
  scannerSessionId,
  TIERS,
  tierAtLeast,
  tierOfLicenseKey,
} from '@svc/protocol';
import { licenseKeyFingerprint, licenseKeySha256, sha256Hex } from '@svc/protocol/node';

/** The rules the portal, the client and the web console share (packages/protocol/src). */

const HEX = '0123456789abcdef'.repeat(4);

describe('license key format', () => {
  it('gives the tier of svc_{pro|biz|msp}_<64 hex> and null for anything else', () => {
    expect(tierOfLicenseKey(`svc_pro_${HEX}`)).toBe('professional');
    expect(tierOfLicenseKey(`svc_biz_${HEX}`)).toBe('business');
    expect(tierOfLicenseKey(`svc_msp_${HEX}`)).toBe('msp');
    for (const t of TIERS) expect(tierOfLicenseKey(`svc_${SEGMENT_OF_TIER[t]}_${HEX}`)).toBe(t);
    for (const bad of [`svc_ent_${HEX}`, `svc_pro_${HEX.toUpperCase()}`, `svc_pro_${HEX}0`, ` svc_pro_${HEX}`, 'x'])
      expect(tierOfLicenseKey(bad), bad).toBeNull();
    expect(`svc_pro_${HEX}`.slice(0, LICENSE_KEY_PREFIX_LENGTH)).toBe('svc_pro_012345');
  });

  it('classes a configured key as none, license, legacy or malformed, blanks around it ignored', () => {
    expect(licenseKeyForm(null)).toEqual({ kind: 'none' });
    expect(licenseKeyForm('  ')).toEqual({ kind: 'none' });
    expect(licenseKeyForm(` svc_biz_${HEX}\n`)).toEqual({ kind: 'license', tier: 'business' });
    expect(licenseKeyForm('shared-legacy-key')).toEqual({ kind: 'legacy' });
    expect(licenseKeyForm('svc_pro_short')).toEqual({ kind: 'malformed' });
  });

  it('hashes a key (trimmed) to the SHA-256 the portal stores; the cache keeps its first 16 hex digits', () => {
    // Known value, computed once with node:crypto.
    const sha = '15ac11432054d55f784a04fe78e79007d508484b541698990f30a9e40cefd912';
    expect(licenseKeySha256(`svc_pro_${HEX}`)).toBe(sha);
    expect(licenseKeySha256(`  svc_pro_${HEX}\n`)).toBe(sha);
    expect(licenseKeyFingerprint(`svc_pro_${HEX}`)).toBe(sha.slice(0, 16));
    expect(licenseKeyFingerprint('abc')).toBe('ba7816bf8f01cfea');
  });
});

describe('sha256Hex known vectors', () => {
  it('matches the values node:crypto gave when the hand-written hash was replaced', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('ü€𝄞')).toBe('27c5b64c2e3f1b189165a4702e1cd257aa4a139a5094e22a6f03babff11315c7');
    expect(sha256Hex('a'.repeat(64))).toBe('ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb');
  });
});

describe('tier ranking', () => {
  it('orders professional < business < msp', () => {
    expect(tierAtLeast('msp', 'business')).toBe(true);
    expect(tierAtLeast('business', 'business')).toBe(true);
    expect(tierAtLeast('professional', 'business')).toBe(false);
    expect(tierAtLeast('business', 'msp')).toBe(false);
    expect(highestTier(['business', 'msp', 'professional'])).toBe('msp');
    expect(highestTier([], 'business')).toBe('business');
  });
});

describe('command state machine', () => {
  it('lets an agent acknowledge a sent command, then complete or fail it, and nothing else', () => {
    const allowed: string[] = [];
    for (const from of COMMAND_STATUSES)
      for (const to of REPORTABLE_STATUSES) if (mayReportCommandStatus(from, to)) allowed.push(`${from}->${to}`);
    expect(allowed).toEqual(['sent->acked', 'acked->completed', 'acked->failed']);
    expect(mayReportCommandStatus('toString', 'acked')).toBe(false);
    expect(mayReportCommandStatus('sent', 'sent')).toBe(false);
  });

  it('every agent report is a move of the whole machine; completed and failed are final', () => {
    for (const from of COMMAND_STATUSES)
      for (const to of REPORTABLE_STATUSES)
        if (mayReportCommandStatus(from, to)) expect(COMMAND_TRANSITIONS[from]).toContain(to);
    expect(COMMAND_STATUSES.filter(isFinalCommandStatus)).toEqual(['completed', 'failed']);
    expect(finishedCommandStatus(true)).toBe('completed');
    expect(finishedCommandStatus(false)).toBe('failed');
  });
});

describe('session ids', () => {
  it('servers take letters, digits, _ and - up to 128 characters', () => {
    expect(isValidSessionId('20250101_120000')).toBe(true);
    expect(isValidSessionId('20250101_120000_smoke-0a1b2c3d')).toBe(true);
    expect(isValidSessionId('a'.repeat(MAX_SESSION_ID_LENGTH))).toBe(true);
    for (const bad of ['', 'a'.repeat(MAX_SESSION_ID_LENGTH + 1), '../x', 'a/b', 'a.b', 'a\0b', 'ü', 42, null])
      expect(isValidSessionId(bad), JSON.stringify(bad)).toBe(false);
  });

  it('the scanner names a session by the UTC second its run started', () => {
    // 23:59:59 UTC is the next day in any zone east of UTC: the name must not follow the local clock.
    expect(scannerSessionId(Date.UTC(2025, 11, 31, 23, 59, 59))).toBe('20251231_235959');
    expect(scannerSessionId(new Date('2025-01-02T03:04:05.999Z'))).toBe('20250102_030405');
    expect(isScannerSessionId('20250102_030405')).toBe(true);
    expect(isScannerSessionId('20250102_030405_smoke-00')).toBe(false);
    expect(() => scannerSessionId(Number.NaN)).toThrow(RangeError);
    expect(() => scannerSessionId(Date.UTC(10000, 0, 1))).toThrow(RangeError);
  });
});
